import glob, sqlite3, json, time, threading, statistics, sys
import numpy as np
path = glob.glob("/tmp/h-embft-store/store-100000-*.sqlite")[0]
conn = sqlite3.connect(path, check_same_thread=False)
table = conn.execute("SELECT id FROM fulltext_tables").fetchone()[0]; table = f"chunk_fts_{table}"
ids = [r[0] for r in conn.execute(f"SELECT rowid FROM {table} LIMIT 20000")]
rng = np.random.default_rng(1)
stop = False
def hog():  # pure python + numpy, like the embedding/vector thread
    m = np.random.rand(2000, 512).astype(np.float32); v = np.random.rand(512).astype(np.float32)
    while not stop:
        s = 0
        for i in range(20000): s += i
        m @ v
def rows(pick):
    return dict(conn.execute(f"SELECT rowid, terms FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))", (json.dumps(pick),)).fetchall())
def concat(pick):
    a, b = conn.execute(f"SELECT group_concat(rowid), group_concat(terms, char(10)) FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))", (json.dumps(pick),)).fetchone()
    return dict(zip(map(int, a.split(",")), b.split("\n")))
def bench(f):
    w=[];c=[]
    for k in range(60):
        pick = sorted(rng.choice(ids, 64, replace=False).tolist())
        t=time.perf_counter(); ct=time.thread_time(); r=f(pick); w.append(time.perf_counter()-t); c.append(time.thread_time()-ct)
    return statistics.median(w)*1000, statistics.median(c)*1000
pick = sorted(ids[:64]); assert rows(pick)==concat(pick)
for label in ["alone", "hog"]:
    if label == "hog":
        th = threading.Thread(target=hog); th.start()
    for f in (rows, concat, rows, concat):
        print(label, f.__name__, "wall %.3f cpu %.3f" % bench(f))
stop = True
