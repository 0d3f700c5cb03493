"""Fault and crash scenarios for ``graphctx chaos``: each one checks a promise many times.

A scenario (:class:`~graphctx_lab.chaos.scenario.Scenario`) owns its set-up (a store, a service, a
Neo4j server) and runs trials; a trial raises :class:`~graphctx_lab.chaos.scenario.BrokenPromise`
when the promise does not hold. :func:`~graphctx_lab.chaos.runner.run_scenarios` runs them and
:func:`~graphctx_lab.chaos.report.render_table` prints scenario / trials / failures.
"""
