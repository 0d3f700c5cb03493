"""Every chunk text of the 100k store (a sample) against every query term of the bench's questions:
TermSet membership == membership in set(analyze(text))."""
import random, sqlite3, sys
from pathlib import Path
from graphctx.text.lexical import analyze, term_sets_many
from graphctx_lab.bench.store import load_passages
_, questions = load_passages(Path("/work/shared/data"))
probe = {t for q in questions for t in analyze(q)}
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
texts = [r[0] for r in conn.execute("SELECT text FROM chunks WHERE id % ? = 0", (int(sys.argv[2]),))]
checked = 0
for i in range(0, len(texts), 40):
    batch = texts[i:i + 40]
    for text, terms in zip(batch, term_sets_many(batch)):
        analysed = set(analyze(text))
        asked = probe | analysed
        assert {t for t in asked if t in terms} == asked & analysed, text[:80]
        checked += len(asked)
print(len(texts), "texts,", len(probe), "probe terms,", checked, "membership checks: all equal")
