"""Ingest: load documents, chunk them, extract a graph draft and write it all through the store."""
