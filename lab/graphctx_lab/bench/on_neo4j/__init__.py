"""``graphctx bench neo4j``: graphctx against neo4j-graphrag on one Neo4j server (see ``run``)."""
