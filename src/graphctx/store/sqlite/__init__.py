"""The embedded default store: one SQLite file, FTS5 full text, exact vector scan."""
