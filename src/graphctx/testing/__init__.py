"""Test helpers shipped with graphctx, for adapter authors and for tests of code built on it.

``conformance`` and its siblings: the GraphStore conformance suites (need pytest).
``faulty_store``: a real store wrapped to inject latency and failures per read method.
``service`` and ``serve``: a two-project corpus with keys and settings, and an ASGI app served
on a real loopback socket in a background thread (the in-process service harness).
``fake_chat``: a local OpenAI-compatible chat endpoint, the one stand-in for a hosted LLM.
"""
