"""Every chunk of the store: its text terms cut from the stored terms == index_terms(text)."""
import json, sqlite3, sys, time
from graphctx.store.records import text_terms
from graphctx.text.lexical import index_terms_many
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
started = time.time()
rows = conn.execute("SELECT c.text, c.heading_path, d.title, f.terms FROM chunks c JOIN documents d ON d.id = c.doc"
                    " LEFT JOIN chunk_fts_1 f ON f.rowid = c.id").fetchall()
bad = 0
for i in range(0, len(rows), 5000):
    part = rows[i:i+5000]
    for (text, heading, title, stored), want in zip(part, index_terms_many([r[0] for r in part])):
        bad += stored is None or text_terms(stored, json.loads(heading), title) != want
print("chunks", len(rows), "differing", bad, f"{time.time()-started:.1f}s")
