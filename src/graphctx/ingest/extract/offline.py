"""The offline graph extractor run after ingest: document nodes, references, mentions.

For every written document it creates one *document node* supported by all the document's
chunks: ``article:<law>:<n>`` when the document declares ``law`` and ``article_no`` metadata
(statutes, one article per document), else ``doc:<document_id>``, named by its title. Then,
per chunk:

- each explicit reference becomes ``(document node) -REFERENCES-> (target node)``, supported
  by the chunk that contains the reference. Statute targets are ``article:<law>:<n>`` (the
  target need not be ingested yet: the relation is walked once it is); Markdown links target
  the linked document's node;
- each dictionary entity mentioned becomes a MENTIONS link from the chunk to the entity node
  (titles of the batch's documents are in the dictionary when ``titles_as_entities``).

With ``concepts``, the batch's items (documents, or the sections of a Markdown document)
are also grouped into Concepts formed offline from their structure, defined terms and
citations (:mod:`~graphctx.ingest.extract.offline_concepts`), members linked PART_OF; the
report carries the concept set's shape and fallback rate. Concepts are formed over the batch
extracted together: re-ingesting a few changed documents re-forms none of them.
Everything found is one draft, which the pipeline writes in one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graphctx.contract import NodeKind
from graphctx.ingest.extract.items import items_of
from graphctx.ingest.extract.mentions import (
    DictionaryEntry,
    EntityDictionary,
    find_mentions,
    short_title,
)
from graphctx.ingest.extract.offline_concepts import (
    CAPITALISED_TERMS,
    MAX_MEMBERS,
    FormedConcept,
    form_concepts,
)
from graphctx.ingest.extract.port import ExtractionInput, ExtractionReport, GraphDraft
from graphctx.ingest.extract.references import (
    ReferenceKind,
    article_key,
    find_references,
    parse_article_label,
)
from graphctx.ingest.extract.shared_names import shared_name_nodes
from graphctx.store.records import MENTIONS, PART_OF, SUPPORTS, KnowledgeNode, Relation
from graphctx.text.names import name_key

__all__ = [
    "ExtractionInput",
    "ExtractionReport",
    "OfflineExtractor",
    "document_node_id",
    "title_names",
]

REFERENCES = "REFERENCES"


def document_node_id(doc: ExtractionInput) -> str:
    law, label = doc.metadata.get("law"), doc.metadata.get("article_no")
    parsed = parse_article_label(label) if law and label else None
    if law and parsed is not None:
        return article_key(parsed[0], law, parsed[1])
    return f"doc:{doc.document_id}"


def _node_name(doc: ExtractionInput) -> str:
    law, label = doc.metadata.get("law"), doc.metadata.get("article_no")
    if law and label:
        return f"{law} {label}" + (f" ({doc.title})" if doc.title else "")
    return doc.title or doc.document_id


def title_names(documents: Sequence[ExtractionInput]) -> list[str]:
    """The titles (and short titles) that title mentions link already: no shared-name node."""
    return [
        name
        for doc in documents
        if doc.title and not doc.metadata.get("article_no")
        for name in (doc.title, short_title(doc.title))
    ]


class OfflineExtractor:
    """References + dictionary mentions (+ optional offline concepts). No model, no I/O.

    ``shared_names`` (off by default) adds an Entity for each capitalised name several
    documents share (:mod:`graphctx.ingest.extract.shared_names`). It stays off because its
    gain does not survive leave-one-set-out: it lifts MuSiQue, and the other sets, with
    MuSiQue held out, do not choose it (2Wiki loses; ``docs/eval/README.md``).
    """

    def __init__(
        self,
        dictionary: EntityDictionary | None = None,
        *,
        titles_as_entities: bool = True,
        references: bool = True,
        concepts: bool = False,
        max_members: int = MAX_MEMBERS,
        capitalised_terms: bool = CAPITALISED_TERMS,
        shared_names: bool = False,
    ) -> None:
        self.dictionary = dictionary or EntityDictionary()
        self.titles_as_entities = titles_as_entities
        self.references = references
        self.concepts = concepts
        self.max_members = max_members
        self.capitalised_terms = capitalised_terms
        self.shared_names = shared_names and titles_as_entities

    def extract(self, documents: Sequence[ExtractionInput]) -> GraphDraft:
        nodes, relations, report = self.build(documents)
        return GraphDraft(tuple(nodes), tuple(relations), report)

    def build(
        self, documents: Sequence[ExtractionInput]
    ) -> tuple[list[KnowledgeNode], list[Relation], ExtractionReport]:
        """Pure: the nodes and relations for a batch of documents."""
        report = ExtractionReport(documents=len(documents))
        own_nodes = {doc.document_id: document_node_id(doc) for doc in documents}
        by_path = {doc.relative_path: own_nodes[doc.document_id] for doc in documents}
        dictionary = self._dictionary(documents, own_nodes)
        short_names = _unique_short_titles(documents) if self.titles_as_entities else {}
        home: dict[str, str] = {
            e.node_id: e.home_document for e in dictionary.entries.values() if e.home_document
        }
        support_nodes: list[KnowledgeNode] = []
        mention_support: dict[str, list[str]] = {}
        relations: dict[tuple[str, str], list[str]] = {}
        cited: dict[tuple[str, str], None] = {}  # every explicit citation, for concepts
        for doc in documents:
            if not doc.chunks:
                continue
            source = own_nodes[doc.document_id]
            chunk_ids = tuple(cid for cid, _ in doc.chunks)
            support_nodes.append(
                KnowledgeNode(
                    source,
                    NodeKind.ENTITY,
                    _node_name(doc),
                    chunk_ids,
                    node_type="Article"
                    if source.startswith(("article:", "section:"))
                    else "Document",
                    aliases=short_names.get(doc.document_id, ()),
                    support_link=SUPPORTS,
                )
            )
            law = doc.metadata.get("law")
            for chunk_id, text in doc.chunks:
                if self.references or self.concepts:
                    for target in self._targets(text, doc, law, by_path, report):
                        if target == source:
                            continue
                        cited.setdefault((source, target), None)
                        if self.references:
                            relations.setdefault((source, target), []).append(chunk_id)
                for mention in find_mentions(text, dictionary):
                    if mention.node_id == source or home.get(mention.node_id) == doc.document_id:
                        continue
                    mention_support.setdefault(mention.node_id, []).append(chunk_id)
        report.document_nodes = len(support_nodes)
        mention_nodes = [
            KnowledgeNode(
                node_id,
                NodeKind.ENTITY,
                dictionary.entries[node_id].name,
                tuple(dict.fromkeys(chunks)),
                node_type=dictionary.entries[node_id].node_type,
                aliases=dictionary.entries[node_id].aliases,
                support_link=MENTIONS,
            )
            for node_id, chunks in sorted(mention_support.items())
        ]
        report.mentions = sum(len(n.supporting_chunk_ids) for n in mention_nodes)
        concepts = self._concepts(documents, own_nodes, cited, report) if self.concepts else []
        names = shared_name_nodes(documents, title_names(documents)) if self.shared_names else []
        report.mentions += sum(len(n.supporting_chunk_ids) for n in names)
        edges = [
            Relation(src, dst, REFERENCES, tuple(dict.fromkeys(chunks)))
            for (src, dst), chunks in sorted(relations.items())
        ]
        report.references = len(edges)
        # Mentions first: a document node's own (stronger) link then wins for shared chunks.
        return [*mention_nodes, *names, *support_nodes, *concepts], edges, report

    def _concepts(
        self,
        documents: Sequence[ExtractionInput],
        own_nodes: Mapping[str, str],
        cited: Mapping[tuple[str, str], None],
        report: ExtractionReport,
    ) -> list[KnowledgeNode]:
        items = items_of(documents, dict(own_nodes))
        whole = {item.node_id: item.key for item in items if item.key == item.document_id}
        links: dict[str, set[str]] = {}
        for source, target in cited:
            if source in whole and target in whole:
                links.setdefault(whole[source], set()).add(whole[target])
                links.setdefault(whole[target], set()).add(whole[source])
        formed, shape = form_concepts(
            items,
            {k: frozenset(v) for k, v in links.items()},
            max_members=self.max_members,
            capitalised=self.capitalised_terms,
        )
        chunks_of = {item.key: item.chunk_ids for item in items}
        report.concepts = len(formed)
        report.fallback_rate = shape.fallback_rate
        report.concept_shape = shape
        report.details.append(f"offline concepts: {shape.summary()}")
        return [_concept_node(concept, chunks_of) for concept in formed]

    def _dictionary(
        self, documents: Sequence[ExtractionInput], own_nodes: Mapping[str, str]
    ) -> EntityDictionary:
        if not self.titles_as_entities:
            return self.dictionary
        combined = EntityDictionary()
        for entry in self.dictionary.entries.values():
            combined.add(entry)
        for doc in documents:
            if doc.title and not doc.metadata.get("article_no"):
                combined.add(
                    DictionaryEntry(
                        own_nodes[doc.document_id],
                        doc.title,
                        node_type="Document",
                        home_document=doc.document_id,
                    )
                )
        return combined

    def _targets(
        self,
        text: str,
        doc: ExtractionInput,
        law: str | None,
        by_path: Mapping[str | None, str],
        report: ExtractionReport,
    ) -> list[str]:
        targets = []
        for ref in find_references(text, own_path=doc.relative_path):
            if ref.kind is ReferenceKind.LINK:
                target = by_path.get(ref.target)
                if target is None:
                    report.references_unresolved += 1
                    target = f"doc:{ref.target}"
                targets.append(target)
            elif (ref.law or law) is not None:
                targets.append(article_key(ref.kind, ref.law or law or "", ref.target))
        return targets


def _unique_short_titles(documents: Sequence[ExtractionInput]) -> dict[str, tuple[str, ...]]:
    """A title's name without its disambiguation ("Brand" for "Brand (play)"), as an alias of
    the document's node for entity lookup, when no other title of the batch shares its key
    (a question names "Brand", not "Brand (play)")."""
    titled = [d for d in documents if d.title and not d.metadata.get("article_no")]
    owners: dict[str, set[str]] = {}
    for doc in titled:
        assert doc.title is not None
        for name in (doc.title, short_title(doc.title)):
            owners.setdefault(name_key(name), set()).add(doc.document_id)
    aliases: dict[str, tuple[str, ...]] = {}
    for doc in titled:
        assert doc.title is not None
        short = short_title(doc.title)
        if short != doc.title and owners.get(name_key(short)) == {doc.document_id}:
            aliases[doc.document_id] = (short,)
    return aliases


def _concept_node(
    concept: FormedConcept, chunks_of: Mapping[str, tuple[str, ...]]
) -> KnowledgeNode:
    support = [(cid, role) for key, role in zip(concept.members, concept.roles, strict=True)
               for cid in chunks_of[key]]  # fmt: skip
    return KnowledgeNode(
        concept.concept_id,
        NodeKind.CONCEPT,
        concept.name,
        tuple(dict.fromkeys(cid for cid, _ in support)),
        description=concept.description,
        node_type=concept.concept_type or concept.source.value,
        support_link=PART_OF,
        support_roles=tuple((cid, role) for cid, role in support if role),
    )
