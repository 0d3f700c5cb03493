"""graphctx inside agent frameworks: one module per framework, each behind its own extra.

* :mod:`graphctx.integrations.langchain` — a LangChain ``BaseRetriever`` and a tool
  (``pip install 'graphctx[langchain]'``);
* :mod:`graphctx.integrations.llamaindex` — a LlamaIndex ``BaseRetriever``
  (``graphctx[llamaindex]``);
* :mod:`graphctx.integrations.agent_framework` — a Microsoft Agent Framework
  ``ContextProvider`` (``graphctx[agent-framework]``).

Each one asks an :class:`~graphctx.integrations.evidence.EvidenceSource`: the provider
``graphctx.open(...)`` returns (in-process) or a :class:`graphctx.client.GraphctxClient`
(a remote ``graphctx serve``). Principal, scopes, project, mode and budget are fixed when the
adapter is built; a framework, an agent or a model supplies only the question, so nothing
they send can widen what the principal sees. Importing this package imports no framework.
"""
