"""A throwaway Neo4j Community server for tests, benchmarks and chaos scenarios, without Docker.

Neo4j Community from Maven Central jars (``pom.xml``), Java 21+ from the machine. One job per
module: ``java`` finds a runtime, ``jars`` resolves and caches the jars, ``home`` lays out a
fresh server directory, ``jvm`` sets the password and launches the JVM until it serves,
``server`` is :func:`running_neo4j` (start, yield a handle, stop, clean up), ``restart`` a
handle that can be killed and started again on the same port and data. ``python -m
graphctx_lab.neo4j_launcher --check`` starts one, queries it over Bolt and stops it.
"""

from graphctx_lab.neo4j_launcher.errors import Neo4jUnavailable
from graphctx_lab.neo4j_launcher.home import free_port, new_home, write_config
from graphctx_lab.neo4j_launcher.jars import jars_cached, neo4j_version, resolve_jars
from graphctx_lab.neo4j_launcher.java import JavaRuntime, find_java
from graphctx_lab.neo4j_launcher.jvm import set_initial_password
from graphctx_lab.neo4j_launcher.password import PASSWORD_LENGTH, Secret, initial_password
from graphctx_lab.neo4j_launcher.restart import RestartableNeo4j, restartable_neo4j
from graphctx_lab.neo4j_launcher.server import Neo4jServer, running_neo4j

__all__ = [
    "PASSWORD_LENGTH",
    "JavaRuntime",
    "Neo4jServer",
    "Neo4jUnavailable",
    "RestartableNeo4j",
    "Secret",
    "find_java",
    "free_port",
    "initial_password",
    "jars_cached",
    "neo4j_version",
    "new_home",
    "resolve_jars",
    "restartable_neo4j",
    "running_neo4j",
    "set_initial_password",
    "write_config",
]
