"""graphctx's QA lab, installed from a source checkout only (``pip install -e lab``).

``chaos`` runs the fault and crash scenarios (``graphctx chaos``), ``bench`` the benchmarks
(``graphctx bench``), ``neo4j_launcher`` starts a throwaway Neo4j Community server from Maven
Central jars; ``commands`` holds what the two ``graphctx`` sub-commands run. The runtime
package never imports this one except to dispatch those two sub-commands.
"""
