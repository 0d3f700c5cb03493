"""Text analysis shared by both store backends, ingest and retrieval.

``lexical``: the full-text analyser (CJK bigrams, stemmed lower-cased words) whose terms both
backends index and query. ``names``: entity name keys and their word variants (Korean
particles, English possessives), so ingest's mention matching, the stores' name lookup and
the query's lookup keys compare equal. Pure functions; imports nothing else of graphctx.
"""
