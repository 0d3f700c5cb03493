"""The store port, its records, and the two backends (embedded SQLite, Neo4j)."""
