"""Time parts of the candidate statement's full-text half (throwaway)."""
import os, sys, json, re, time, statistics
import neo4j, numpy as np
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.store.neo4j import Neo4jGraphStore, candidate_queries, parse_location, acl
from graphctx.store.neo4j.queries import FULLTEXT_INDEX
from graphctx_lab.bench.neo4j_candidate_pairs import plan, statement_parameters, EVERY_SCOPE
from graphctx_lab.bench.store import default_data_dir

where = parse_location(os.environ["NEO4J_URI"], os.environ)
N = int(sys.argv[1]); ROUNDS = int(sys.argv[2]); CASE = sys.argv[3] if len(sys.argv) > 3 else "all"
asked = plan(default_data_dir(), 10000, N + 5)
emb = UniversalSentenceEncoderEmbedder()
store = Neo4jGraphStore(where.uri, where.auth, where.database)
drv = neo4j.GraphDatabase.driver(where.uri, auth=where.auth, notifications_min_severity="OFF")
S = candidate_queries.CANDIDATE_SEARCH
pool_call = re.search(r"CALL \(text_keys, text_visible, complement\) \{.*?\n\}\n", S, re.S).group(0)
probe_call = re.search(r"CALL \(text_keys, bound, needles, marks, norm_base, norm_step\) \{.*?\n\}\n", S, re.S).group(0)
NOPOOL = S.replace(pool_call, "CALL () { RETURN $c_matched AS matched, $c_matched_length AS matched_length }\n")
NOPROBE = S.replace(probe_call, "CALL () { RETURN $c_probed AS probed }\n")
NEITHER = NOPOOL.replace(probe_call, "CALL () { RETURN $c_probed AS probed }\n")
UPTO_PROBE = S[: S.index(probe_call) + len(probe_call)] + "RETURN probed"
assert NOPOOL != S and NOPROBE != S
# standalone
KEYS = "CALL () { OPTIONAL MATCH (s:ScopeSet {namespace: $namespace}) WHERE any(scope IN s.scopes WHERE scope IN $scopes) RETURN collect(s.key) AS keys, coalesce(sum(s.chunk_count),0) AS visible, coalesce(sum(s.total_length),0) AS vlen }\n"
COUNT = "CYPHER 25\n" + KEYS + f"CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $q, {{limit: visible}}) YIELD node WHERE node.acl_key IN keys RETURN count(node) AS matched, sum(node.length) AS matched_length, visible, vlen"
COUNTBARE = "CYPHER 25\n" + KEYS + f"CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $q, {{limit: visible}}) YIELD node RETURN count(node) AS matched"
PROBE = "CYPHER 25\n" + KEYS + f"CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $lucene, {{limit: $probe}}) YIELD node WHERE node.acl_key IN keys RETURN count(node) AS m"
cases = []
for q, s in asked:
    v = np.asarray(emb.embed_query(q), dtype=np.float32).astype(np.float64).tolist()
    p = statement_parameters(store, q, v, EVERY_SCOPE if CASE == "all" else s)
    if p["lucene"] is None: continue
    cases.append(p)
def run(text, p):
    t = time.perf_counter()
    with drv.session(database=where.database, default_access_mode="READ") as ses:
        r = ses.run(text, p); rows = [x.data() for x in r]; summ = r.consume()
    return (time.perf_counter() - t) * 1000, summ.result_available_after + summ.result_consumed_after, rows
# constants
for p in cases:
    pf = dict(p, vector=None)
    full = run(S, pf)[2][0]
    # matched from count query with the chosen side
    c1 = run(COUNT, dict(p, q=p["lucene"]))[2][0]; c2 = run(COUNT, dict(p, q=p["complement"]))[2][0]
    p["_c"] = (c1, c2, full)
    # choose complement the way the statement does -> just derive matched from pool_size
    comp = c1["visible"] - max(full["holding"]) < sum(full["holding"])
    p["c_matched"] = c2["matched"] if comp else c1["matched"]
    p["c_matched_length"] = c2["matched_length"] if comp else c1["matched_length"]
    p["_comp"] = comp
    p["c_probed"] = run(UPTO_PROBE, pf)[2][0]["probed"]
print("complement used:", sum(p["_comp"] for p in cases), "of", len(cases), file=sys.stderr)
print("pool sizes:", sorted(p["_c"][2]["pool_size"] for p in cases), file=sys.stderr)

variants = {"full": (S, False), "ft": (S, True), "ft_nopool": (NOPOOL, True), "ft_noprobe": (NOPROBE, True),
            "ft_neither": (NEITHER, True), "count": (COUNT, None), "countbare": (COUNTBARE, None), "probe": (PROBE, None)}
for p in cases:
    p["q"] = p["complement"] if p["_comp"] else p["lucene"]
res = {k: [] for k in variants}
for r in range(ROUNDS):
    per = {k: [] for k in variants}
    for i, p in enumerate(cases):
        names = list(variants)
        names = names[i % len(names):] + names[: i % len(names)]
        for k in names:
            text, novec = variants[k]
            pp = {a: b for a, b in p.items() if not a.startswith("_")}
            if novec: pp["vector"] = None
            wall, server, rows = run(text, pp)
            if r == 0 and k.startswith("ft"):
                base = p["_c"][2]
                got = rows[0]
                assert {a: got[a] for a in ("pool_size", "total_length", "holding", "lexical_top")} == {a: base[a] for a in ("pool_size", "total_length", "holding", "lexical_top")}, k
            per[k].append(server)
    print(json.dumps({k: round(statistics.median(v), 2) for k, v in per.items()}), os.getloadavg(), flush=True)
