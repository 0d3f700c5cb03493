"""Retrieval: authorize, route, candidates, fusion, graph expansion, freshness, the output gate."""
