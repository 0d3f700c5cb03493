"""Scenario ``neo4j-deadline-under-latency``: deadlines hold when the network to Neo4j misbehaves.

The provider talks to the server through :class:`~graphctx_lab.chaos.tcp_proxy.TcpProxy` (real
sockets; ``bolt://``, see the proxy's docstring). Each trial draws ``timeout_ms`` in
[100, 2000] and one fault: latency on every relayed chunk, a stall from the start (a server
that never answers: its transaction timeout cannot fire), a stall part-way through, or every
connection reset part-way through. The promise:

- the response (or the typed error) arrives within ``timeout_ms`` + :data:`OVERHEAD_MS`;
  the measured overrun is reported;
- a bundle that ran out of time says so: ``manifest.partial``, a ``timed_out`` stage, and
  ``deadline_stage`` naming it; a stall from the start always produces such a stage;
- a failure is typed (``StoreUnavailableError``, retryable), never anything else;
- after the fault is healed, the same provider answers again (nothing was left stuck).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Final

from graphctx.contract import ContextRequest, ContextResponse, StageStatus
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import StoreUnavailableError
from graphctx.provider import ContextProvider
from graphctx_lab.chaos.neo4j_service import ANSWERABLE_QUERY, ingest_corpus, neo4j_provider
from graphctx_lab.chaos.scenario import ChaosEnv, FunctionScenario, Trial, TrialRunner
from graphctx_lab.chaos.tcp_proxy import TcpProxy

__all__ = ["SCENARIO"]

OVERHEAD_MS: Final = 750  # allowed on top of timeout_ms; the report shows the measured overrun
MIN_TIMEOUT_MS: Final = 100
MAX_TIMEOUT_MS: Final = 2000
FAULTS: Final = ("latency", "stall", "stall-later", "reset-later")
MAX_LATENCY_S: Final = 0.4
HEALED_TIMEOUT_MS: Final = 10_000  # the post-fault request: generous, it checks recovery only


def _request(timeout_ms: int) -> ContextRequest:
    return ContextRequest(
        query=ANSWERABLE_QUERY,
        principal_id="ada",
        allowed_scopes=["public"],
        namespace="alpha",
        timeout_ms=timeout_ms,
    )


def _inject(trial: Trial, proxy: TcpProxy, fault: str, timeout_ms: int) -> threading.Timer | None:
    """Apply ``fault`` now, or arm a timer that applies it part-way through the request."""
    if fault == "latency":
        proxy.latency_s = trial.rng.uniform(0.01, MAX_LATENCY_S)
        trial.measure("latency_ms", proxy.latency_s * 1000)
        return None
    if fault == "stall":
        proxy.stall()
        return None
    action: Callable[[], object] = (
        proxy.stall if fault == "stall-later" else proxy.reset_connections
    )
    proxy.latency_s = 0.02  # keep requests in flight long enough to be hit
    timer = threading.Timer(trial.rng.uniform(0, timeout_ms / 1000), action)
    timer.start()
    return timer


def _check_bundle(trial: Trial, fault: str, response: ContextResponse) -> None:
    manifest = response.manifest
    timed_out = [s.stage for s in manifest.stages if s.status is StageStatus.TIMED_OUT]
    if timed_out:
        trial.check(manifest.partial, f"stages {timed_out} timed out but the bundle is not partial")
        trial.check(
            manifest.deadline_stage in timed_out,
            f"deadline_stage {manifest.deadline_stage!r} is not one of {timed_out}",
        )
    if fault == "stall":
        trial.check(bool(timed_out), f"a stalled store produced no timed-out stage: {manifest}")
    if response.reason is not None and response.reason.value == "deadline_exceeded":
        trial.check(bool(timed_out), "deadline_exceeded without a timed-out stage")
    trial.measure("timed_out_stages", len(timed_out))


def _run_trial(trial: Trial, provider: ContextProvider, proxy: TcpProxy) -> None:
    timeout_ms = trial.rng.randint(MIN_TIMEOUT_MS, MAX_TIMEOUT_MS)
    fault = trial.rng.choice(FAULTS)
    timer = _inject(trial, proxy, fault, timeout_ms)
    started = time.monotonic()
    try:
        response: ContextResponse | None = provider.retrieve(_request(timeout_ms))
    except StoreUnavailableError as exc:
        trial.check(exc.retryable, f"{fault}: a non-retryable store error: {exc}")
        response = None
    finally:
        elapsed_ms = (time.monotonic() - started) * 1000
        if timer is not None:
            timer.cancel()
            timer.join()
        proxy.heal()
    overrun_ms = elapsed_ms - timeout_ms
    trial.measure("overrun_ms", overrun_ms)
    trial.measure(f"overrun_ms[{fault}]", overrun_ms)
    trial.check(
        overrun_ms <= OVERHEAD_MS,
        f"{fault}: answered after {elapsed_ms:.0f} ms for timeout_ms={timeout_ms}",
    )
    if response is not None:
        _check_bundle(trial, fault, response)
    healed = provider.retrieve(_request(HEALED_TIMEOUT_MS))
    trial.check(healed.answerable, f"after healing {fault}: {healed.reason}")


def _setup(env: ChaosEnv) -> Iterator[TrialRunner]:
    assert env.neo4j is not None
    embedder = UniversalSentenceEncoderEmbedder()
    with env.neo4j() as server:
        ingest_corpus(server, embedder)
        with (
            TcpProxy("127.0.0.1", server.bolt_port) as proxy,
            neo4j_provider(f"bolt://{proxy.address}", server, embedder).open() as provider,
        ):
            warm = provider.retrieve(_request(HEALED_TIMEOUT_MS))
            if not warm.answerable:
                raise RuntimeError(f"the corpus does not answer through the proxy: {warm.reason}")

            def run(trial: Trial) -> None:
                _run_trial(trial, provider, proxy)

            yield run


SCENARIO: Final = FunctionScenario(
    name="neo4j-deadline-under-latency",
    promise="through a proxy injecting latency, stalls and resets, every request answers "
    "within timeout_ms plus a small overhead, names its timed-out stage, and fails only "
    "with a retryable StoreUnavailableError",
    default_trials=40,
    setup=_setup,
    needs_neo4j=True,
)
