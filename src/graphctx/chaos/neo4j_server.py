"""(being written) A dedicated, restartable Neo4j server for the chaos scenarios."""
