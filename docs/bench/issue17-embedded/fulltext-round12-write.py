"""Write cost of the full-text index, base vs new, alternated batch by batch (ABBA).

usage: fulltext-round12-write.py BASE_TREE STORE_DIR ROUNDS
Takes 1,000-chunk batches of the 100k store's chunk texts and indexes each batch with the
base tree's fulltext.index_chunks and with this tree's, each into a fresh store file of its
own, one transaction per batch; prints per round the ms per 1,000 chunks of each and the ratio.
"""
import glob, importlib.util, sqlite3, statistics, sys, tempfile, time
from pathlib import Path
from graphctx.store.sqlite import fulltext, schema


def load(tree: str, name: str, relative: str):
    spec = importlib.util.spec_from_file_location(name, f"{tree}/src/graphctx/store/sqlite/{relative}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main(base_tree: str, folder: str, rounds: int) -> None:
    base = load(base_tree, "base_fulltext", "fulltext.py")
    source = sqlite3.connect(glob.glob(f"{folder}/store-100000-*.sqlite")[0])
    texts = [t for (t,) in source.execute("SELECT text FROM chunks ORDER BY id LIMIT ?", (rounds * 2000,))]
    with tempfile.TemporaryDirectory() as tmp:
        conns = {}
        for leg in ("base", "new"):
            path = Path(tmp) / f"{leg}.sqlite"
            conn = schema.connect(path, read_only=False)
            schema.initialise(conn, path)
            conn.execute("PRAGMA foreign_keys = OFF")  # the index alone: no chunk rows
            conns[leg] = conn
        index = {"base": base.index_chunks, "new": fulltext.index_chunks}
        for r in range(rounds):
            took = {}
            order = ["base", "new", "new", "base"] if r % 2 == 0 else ["new", "base", "base", "new"]
            for k, leg in enumerate(order):
                batch = texts[(2 * r + k // 2) * 1000:(2 * r + k // 2 + 1) * 1000]
                ids = list(range((2 * r + k // 2) * 1000 + 1, (2 * r + k // 2 + 1) * 1000 + 1))
                conn = conns[leg]
                started = time.process_time()
                conn.execute("BEGIN")
                index[leg](conn, "bench", ids, batch)
                conn.execute("COMMIT")
                took.setdefault(leg, []).append((time.process_time() - started) * 1000)
            b, n = statistics.mean(took["base"]), statistics.mean(took["new"])
            print(f"round {r + 1}: base {b:.1f} ms new {n:.1f} ms CPU per 1000 chunks ({n / b:.3f})", flush=True)
        for leg, conn in conns.items():
            conn.close()
            print(leg, "file MB", round((Path(tmp) / f"{leg}.sqlite").stat().st_size / 1e6, 1))

main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
