from __future__ import annotations

from graphctx.contract import NodeKind
from graphctx.ingest.extract import ExtractionInput, OfflineExtractor
from graphctx.ingest.extract.shared_names import MAX_DOCUMENTS, shared_name_nodes
from graphctx.store.records import MENTIONS


def doc(doc_id: str, text: str, title: str | None = None) -> ExtractionInput:
    return ExtractionInput(doc_id, title, {}, None, ((f"{doc_id}#0", text),))


JOURNAL = doc(
    "journal",
    "The Journal of Psychotherapy Integration is published by the American Psychological"
    " Association.",
    "Journal of Psychotherapy Integration",
)
ADOLESCENCE = doc(
    "adolescence",
    "Hall, the first president of the American Psychological Association, wrote Adolescence.",
    "Adolescence",
)


def test_a_name_two_documents_share_links_their_chunks() -> None:
    nodes = shared_name_nodes([JOURNAL, ADOLESCENCE])
    assert [(n.name, n.supporting_chunk_ids) for n in nodes] == [
        ("American Psychological Association", ("journal#0", "adolescence#0"))
    ]
    assert nodes[0].kind is NodeKind.ENTITY
    assert nodes[0].support_link == MENTIONS


def test_the_node_id_does_not_carry_the_name() -> None:
    (node,) = shared_name_nodes([JOURNAL, ADOLESCENCE])
    assert node.node_id.startswith("name:")
    assert "american" not in node.node_id.casefold()


def test_a_name_one_document_uses_or_a_title_links_nothing() -> None:
    assert shared_name_nodes([JOURNAL]) == []
    both = doc("other", "A review in the Journal of Psychotherapy Integration.")
    titles = ["Journal of Psychotherapy Integration"]
    assert [n.name for n in shared_name_nodes([JOURNAL, both], titles)] == []


def test_a_name_too_many_documents_use_links_nothing() -> None:
    common = [
        doc(f"d{i}", f"Born in the United States, item {i}.") for i in range(MAX_DOCUMENTS + 1)
    ]
    assert shared_name_nodes(common) == []
    assert len(shared_name_nodes(common[:MAX_DOCUMENTS])) == 1


def test_the_offline_extractor_writes_shared_names_only_when_asked() -> None:
    nodes, _, _ = OfflineExtractor(shared_names=True).build([JOURNAL, ADOLESCENCE])
    assert "American Psychological Association" in {n.name for n in nodes}
    nodes, _, _ = OfflineExtractor().build([JOURNAL, ADOLESCENCE])
    assert "American Psychological Association" not in {n.name for n in nodes}


def test_a_title_without_its_disambiguation_is_an_alias_of_the_document_node() -> None:
    play = doc("play", "Brand is a play by Henrik Ibsen.", "Brand (play)")
    film = doc("film", "Ghosts is a film.", "Ghosts (film)")
    opera = doc("opera", "Ghosts is an opera.", "Ghosts (opera)")
    nodes, _, _ = OfflineExtractor().build([play, film, opera])
    aliases = {n.node_id: n.aliases for n in nodes if n.node_id.startswith("doc:")}
    assert aliases == {"doc:play": ("Brand",), "doc:film": (), "doc:opera": ()}  # Ghosts: two
