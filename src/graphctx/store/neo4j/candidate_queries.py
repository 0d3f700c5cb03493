"""The retrieval's candidate statement (CANDIDATE_SEARCH) and its full-text half.

Split from queries.py (the other statements); the same rules: nothing is built from caller
input, values travel as ``$parameters``, scopes are applied inside the statement.
"""

from __future__ import annotations

from typing import Final

from graphctx.store.neo4j.queries import (
    FULLTEXT_INDEX,
    HIT_COLUMNS,
    VIEW_MAP,
    VISIBLE,
    vector_exact_body,
    vector_in_index_body,
    view_map,
)


def _held(node: str) -> str:
    """``held``: whether each query term (``needles``: each term between spaces) is among
    ``node``'s stored terms (a cheap test against counting each term)."""
    return f"""
    WITH {node}, ' ' + {node}.terms + ' ' AS padded
    WITH {node}, [x IN needles | padded CONTAINS x] AS held"""


def _scored(node: str) -> str:
    """Rows ``node, held`` -> ``node, frequencies, score``: visible BM25 (graphctx.store.bm25)
    from the statistics in scope (``bound`` = idf * (k1 + 1), ``norm_base`` + ``norm_step`` *
    length = k1 * (1 - b + b * length / average_length)). A term held once counts 1; a term
    held more often is in the chunk's write-time ``repeats`` (``marks``: each term between two
    spaces and one, the count after it). A chunk written before ``repeats`` counts each held
    term in its stored terms."""
    legacy = "(size(spaced) - size(replace(spaced, needles[i], ''))) / size(needles[i])"
    return f"""
    WITH {node}, held, {node}.repeats AS repeats,
         CASE WHEN {node}.repeats IS NULL THEN ' ' + replace({node}.terms, ' ', '  ') + ' ' END
         AS spaced
    WITH {node}, [i IN range(0, size(needles) - 1) | CASE
            WHEN NOT held[i] THEN 0
            WHEN repeats IS NULL THEN {legacy}
            WHEN repeats CONTAINS marks[i]
            THEN toInteger(split(split(repeats, marks[i])[1], ' ')[0])
            ELSE 1 END] AS frequencies
    WITH {node}, frequencies, norm_base + norm_step * {node}.length AS norm
    WITH {node}, frequencies, reduce(score = 0.0, i IN range(0, size(bound) - 1) |
        score + CASE WHEN frequencies[i] > 0
            THEN bound[i] * frequencies[i] / (frequencies[i] + norm)
            ELSE 0.0 END) AS score"""


# The full-text half of CANDIDATE_SEARCH (imports n, keys, visible, terms; adds pool_size,
# total_length, holding, unmigrated, lexical_top and the views of its rows, lexical_views).
# Visible BM25 (graphctx.store.bm25) with the statistics it had when every visible match was
# scanned, found without scanning them:
# - n(t) is summed from the query term's write-time Term node, over the visible scope sets'
#   entries only (text_statistics.py); ``unmigrated`` counts visible sets written before those
#   statistics, and is not 0 while a graph's TermCount layout is not yet converted to Term;
# - the pool (visible chunks holding any query term) is counted with its total length from
#   ``Chunk.length`` alone, reading whichever side is smaller: the pool ($lucene), or its
#   complement among the visible chunks ($complement: the ACL clause minus every term), whose
#   count and length are taken from the scope sets' chunk_count and total_length;
# - the hits are the exact top $limit by MaxScore: Lucene's best $probe visible matches (its
#   index-wide ranking only chooses which rows are probed) give a threshold, the $limit-th
#   best visible score. A term's ``ceiling`` bounds its score in any visible chunk:
#   idf * m * (k1 + 1) / (m + k1 * (1 - b + b * L / avgdl)), with m the largest count of the
#   term in one chunk and L the shortest holder, both over the visible scope sets' entries
#   only (the Term's ``peaks`` and ``shortest``, bounds kept at write time), or
#   idf * (k1 + 1) when a visible entry has none (a Term written before them). With the
#   terms ordered by ceiling, a chunk whose held terms' ceilings add up to at most the
#   threshold cannot reach the top $limit; one that can holds an essential term t (its
#   strongest held term: t's ceiling plus those of the weaker terms exceeds the threshold)
#   and, when t's ceiling alone does not, a weaker term u too (and, when t's and u's do not,
#   a term weaker than u). Lucene is asked for exactly those combinations (``clauses``; one
#   level only past $clauses term clauses), up to $pool rows (R4). Of those, only a chunk
#   whose own bound (the ceilings of the terms its stored terms hold, found by CONTAINS, a
#   cheap test against counting each term, with its own length for L) exceeds the threshold
#   is scored, and only a score above the threshold is kept. Of those, the $view_pool best
#   leave the server and Python re-scores them exactly ($view_pool is a margin over the
#   limit for last-bit differences; every chunk that can reach the top $limit, a score above
#   the threshold, is among them).
# Lucene is only asked for visible chunks ($acl, the +acl_terms clause), every row is checked
# against the visible scope sets (``acl_key``, written with the document's scopes), and the
# rows that leave the server against their document's scopes too. $terms and $quoted (the
# terms as Lucene phrases) are joined by spaces (terms hold none).
FULLTEXT_CALLS: Final = f"""
CALL (terms) {{
    OPTIONAL MATCH (s:ScopeSet {{namespace: $namespace}})
    WHERE $lucene IS NOT NULL AND any(scope IN s.scopes WHERE scope IN $scopes)
    WITH collect(s) AS sets
    WITH [s IN sets | s.key] AS text_keys,
         reduce(total = 0, s IN sets | total + s.chunk_count) AS text_visible,
         reduce(total = 0, s IN sets | total + coalesce(s.total_length, 0)) AS visible_length,
         size([s IN sets WHERE s.total_length IS NULL])
         + CASE WHEN EXISTS {{ MATCH (:TermCount) }} THEN 1 ELSE 0 END AS unmigrated
    WITH text_keys, text_visible, visible_length, unmigrated, [t IN terms | COLLECT {{
               MATCH (x:Term {{namespace: $namespace, term: t}})
               UNWIND range(0, size(x.scope_sets) - 1) AS i
               WITH x, i
               WHERE x.scope_sets[i] IN text_keys
               RETURN [x.chunks[i], coalesce(x.peaks[i], -1), coalesce(x.shortest[i], 0)]
           }}] AS entries
    RETURN text_keys, text_visible, visible_length, unmigrated,
           [e IN entries | reduce(held = 0, x IN e | held + x[0])] AS holding,
           [e IN entries | reduce(most = 0, x IN e |
               CASE WHEN most < 0 OR x[1] < 0 THEN -1 WHEN x[1] > most THEN x[1] ELSE most END)]
           AS peak,
           [e IN entries | reduce(least = -1, x IN e |
               CASE WHEN least < 0 OR x[2] < least THEN x[2] ELSE least END)] AS shortest
}}
WITH n, keys, visible, terms, text_keys, text_visible, visible_length, unmigrated, holding,
     peak, shortest,
     text_visible - reduce(most = 0, h IN holding | CASE WHEN h > most THEN h ELSE most END)
     < reduce(total = 0, h IN holding | total + h) AS complement
CALL (text_keys, text_visible, complement) {{
    WITH 1 AS one
    WHERE $lucene IS NOT NULL AND text_visible > 0
    CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}',
        CASE WHEN complement THEN $complement ELSE $lucene END, {{limit: text_visible}})
    YIELD node
    WHERE node.acl_key IN text_keys
    RETURN count(node) AS matched, sum(node.length) AS matched_length
}}
WITH n, keys, visible, terms, text_keys, unmigrated, holding, peak, shortest,
     CASE WHEN complement THEN text_visible - matched ELSE matched END AS pool_size,
     CASE WHEN complement THEN visible_length - matched_length ELSE matched_length END
     AS total_length
WITH n, keys, visible, terms, text_keys, unmigrated, holding, peak, shortest, pool_size,
     total_length,
     toFloat(total_length) / CASE pool_size WHEN 0 THEN 1 ELSE pool_size END AS average_length,
     [held IN holding | log((visible - held + 0.5) / (held + 0.5))] AS raw_idf
WITH n, keys, visible, terms, text_keys, unmigrated, holding, peak, shortest, pool_size,
     total_length,
     CASE WHEN average_length < 1e-9 THEN 1e-9 ELSE average_length END AS average_length,
     [x IN raw_idf | CASE WHEN x < 1e-6 THEN 1e-6 ELSE x END] AS idf
WITH n, keys, visible, terms, text_keys, unmigrated, holding, peak, shortest, pool_size,
     total_length, [x IN idf | x * ($k1 + 1)] AS bound, [t IN terms | ' ' + t + ' '] AS needles,
     [t IN terms | '  ' + t + ' '] AS marks,
     $k1 * (1 - $b) AS norm_base, $k1 * $b / average_length AS norm_step
WITH n, keys, visible, text_keys, unmigrated, holding, pool_size, total_length, bound, peak,
     needles, marks, norm_base, norm_step,
     [i IN range(0, size(bound) - 1) | CASE
         WHEN peak[i] < 0 THEN bound[i]
         WHEN peak[i] = 0 THEN 0.0
         ELSE bound[i] * peak[i] / (peak[i] + (norm_base + norm_step * shortest[i])) END]
     AS ceiling
CALL (text_keys, bound, needles, marks, norm_base, norm_step) {{
    WITH $lucene AS lucene
    WHERE lucene IS NOT NULL
    CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', lucene, {{limit: $probe}})
    YIELD node
    WHERE node.acl_key IN text_keys{_held("node")}{_scored("node")}
    WITH score
    ORDER BY score DESC
    LIMIT $limit
    RETURN collect(score) AS probed
}}
WITH n, keys, visible, text_keys, unmigrated, holding, pool_size, total_length, bound,
     ceiling, peak, needles, marks, norm_base, norm_step,
     CASE WHEN size(probed) >= $limit THEN probed[$limit - 1] * (1 - 1e-9) ELSE 0.0 END
     AS threshold
WITH n, keys, visible, text_keys, unmigrated, holding, pool_size, total_length, bound,
     ceiling, peak, needles, marks, norm_base, norm_step, threshold,
     [i IN range(0, size(ceiling) - 1) | [j IN range(0, size(ceiling) - 1)
         WHERE ceiling[j] > 0.0
           AND (ceiling[j] < ceiling[i] OR (ceiling[j] = ceiling[i] AND j > i))]] AS weaker
WITH n, keys, visible, text_keys, unmigrated, holding, pool_size, total_length, bound,
     ceiling, peak, needles, marks, norm_base, norm_step, threshold, weaker,
     [w IN weaker | reduce(below = 0.0, j IN w | below + ceiling[j])] AS tail
WITH n, keys, visible, text_keys, unmigrated, holding, pool_size, total_length, bound,
     ceiling, peak, needles, marks, norm_base, norm_step, threshold, weaker, tail,
     [i IN range(0, size(ceiling) - 1) WHERE ceiling[i] + tail[i] > threshold] AS essential
WITH n, keys, visible, text_keys, unmigrated, holding, pool_size, total_length, bound,
     ceiling, peak, needles, marks, norm_base, norm_step, threshold, weaker, tail, essential,
     [i IN range(0, size(ceiling) - 1) | [j IN weaker[i]
         WHERE ceiling[i] + ceiling[j] + tail[j] > threshold]] AS second
WITH n, keys, visible, text_keys, unmigrated, holding, pool_size, total_length, bound,
     ceiling, peak, needles, marks, norm_base, norm_step, threshold, weaker, tail, essential,
     second, reduce(leaves = 0, i IN essential | leaves + 1 + reduce(inner = 0, j IN second[i] |
         inner + 1 + size(weaker[j]))) <= $clauses AS nested
CALL (text_keys, bound, ceiling, peak, needles, marks, norm_base, norm_step, threshold,
      weaker, essential, second, nested) {{
    WITH CASE $quoted WHEN '' THEN [] ELSE split($quoted, ' ') END AS quoted
    WITH quoted, [i IN essential | CASE
            WHEN ceiling[i] > threshold THEN quoted[i]
            WHEN NOT nested
            THEN '(+' + quoted[i] + ' +(' + reduce(w = '', j IN weaker[i] | w + ' ' + quoted[j])
                 + '))'
            ELSE '(+' + quoted[i] + ' +(' + reduce(w = '', j IN second[i] | w + ' ' + CASE
                WHEN ceiling[i] + ceiling[j] > threshold THEN quoted[j]
                ELSE '(+' + quoted[j] + ' +('
                     + reduce(v = '', l IN weaker[j] | v + ' ' + quoted[l]) + '))' END)
                 + '))' END] AS clauses
    WITH $acl + ' +(' + reduce(q = '', clause IN clauses | q + ' ' + clause) + ')' AS lucene
    WHERE $lucene IS NOT NULL AND size(essential) > 0
    CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', lucene, {{limit: $pool}})
    YIELD node
    WHERE node.acl_key IN text_keys{_held("node")}
    WITH node, held, norm_base + norm_step * node.length AS norm
    WHERE reduce(most = 0.0, i IN range(0, size(bound) - 1) | most + CASE
        WHEN NOT held[i] THEN 0.0
        WHEN peak[i] < 0 THEN bound[i]
        ELSE bound[i] * peak[i] / (peak[i] + norm) END) > threshold{_scored("node")}
    WITH node, frequencies, score
    WHERE score > threshold
    ORDER BY score DESC, node.chunk_id
    LIMIT $view_pool
    MATCH (d:Document)-[:HAS_CHUNK]->(node)
    WHERE node.namespace = $namespace AND {VISIBLE}
    RETURN collect({{chunk_id: node.chunk_id, length: node.length, frequencies: frequencies}})
           AS lexical_top, collect({view_map("node")}) AS lexical_views
}}"""

# A vector hit's columns in CANDIDATE_SEARCH: its view too, when it is in $namespace.
_VECTOR_HIT_WITH_VIEW: Final = (
    f"{HIT_COLUMNS}, CASE WHEN c.namespace = $namespace THEN {VIEW_MAP} END AS view"
)

# One retrieval's candidates in one statement (one round trip): the scope sets the caller
# sees (VECTOR_PLAN), the visible full-text hits (FULLTEXT_CALLS), of which only the pool's
# statistics and its $view_pool best by the same BM25 (graphctx.store.bm25) leave the server:
# Python re-scores those exactly,
# the vector hits with the ACL filter inside the index or the exact scan
# (VECTOR_SEARCH_IN_INDEX / VECTOR_SEARCH_EXACT, chosen by $strategy as the store does), and
# the scoped views (FETCH_CHUNKS' fields and checks) of the vector hits and of those best
# full-text matches ($view_pool is a margin over the limit, so a last-bit difference between
# Java's and Python's arithmetic cannot change which hits Python keeps). Each view is read
# where its row already holds the chunk and its visible document; a vector hit's view only
# in $namespace (as FETCH_CHUNKS reads), and once when it is a full-text row too.
# $lucene / $vector are null when that list is not asked for. $terms are the query terms
# joined by spaces (terms hold none): the server plans a statement again for each size class
# of a list parameter, a second or more here.
CANDIDATE_SEARCH: Final = f"""
CYPHER 25
OPTIONAL MATCH (n:Namespace {{name: $namespace}})
WITH n, CASE $terms WHEN '' THEN [] ELSE split($terms, ' ') END AS terms
CALL () {{
    OPTIONAL MATCH (s:ScopeSet {{namespace: $namespace}})
    WHERE any(scope IN s.scopes WHERE scope IN $scopes)
    RETURN collect(s.key) AS keys, coalesce(sum(s.chunk_count), 0) AS visible
}}
{FULLTEXT_CALLS}
CALL (n, keys, visible) {{
    CALL (n, keys, visible) {{
      WHEN $vector IS NOT NULL AND size(keys) > 0 AND n.dimension = size($vector)
           AND ($strategy = 'exact' OR ($strategy = 'auto' AND visible <= $exact_max)) THEN {{
{vector_exact_body("keys", _VECTOR_HIT_WITH_VIEW)}
      }}
      WHEN $vector IS NOT NULL AND size(keys) > 0 AND n.dimension = size($vector)
           AND ($strategy = 'in_index' OR ($strategy = 'auto' AND visible > $exact_max)) THEN {{
{vector_in_index_body("keys", _VECTOR_HIT_WITH_VIEW)}
      }}
    }}
    RETURN collect({{chunk_id: chunk_id, score: score}}) AS vector_hits,
           collect(view) AS vector_views
}}
WITH n, keys, visible, pool_size, total_length, holding, unmigrated, lexical_top, vector_hits,
     lexical_views, vector_views, [r IN lexical_top | r.chunk_id] AS lexical_ids
RETURN n.dimension AS dimension, size(keys) > 0 AS any_visible_set, visible, pool_size,
       total_length, holding, unmigrated, lexical_top, vector_hits,
       lexical_views + [v IN vector_views WHERE NOT v.chunk_id IN lexical_ids] AS views
"""
