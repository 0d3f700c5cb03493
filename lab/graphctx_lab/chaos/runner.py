"""Run scenarios: set each up once, run its trials, count the broken promises."""

from __future__ import annotations

import random
import time
import traceback
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graphctx_lab.chaos.scenario import BrokenPromise, ChaosEnv, Scenario, Trial

__all__ = ["ScenarioResult", "run_scenario", "run_scenarios"]

MAX_KEPT_FAILURES = 5  # failure messages kept per scenario (the count is always exact)


@dataclass
class ScenarioResult:
    name: str
    promise: str
    trials: int = 0
    failures: int = 0
    elapsed_s: float = 0.0
    failure_messages: list[str] = field(default_factory=list)
    measurements: dict[str, list[float]] = field(default_factory=dict)

    def fail(self, message: str) -> None:
        self.failures += 1
        if len(self.failure_messages) < MAX_KEPT_FAILURES:
            self.failure_messages.append(message)


def run_scenario(
    scenario: Scenario,
    env: ChaosEnv,
    trials: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> ScenarioResult:
    """Run ``trials`` trials (default: the scenario's own count); a failed set-up is a failure."""
    result = ScenarioResult(scenario.name, scenario.promise)
    count = scenario.default_trials if trials is None else trials
    started = time.monotonic()
    env.workdir.mkdir(parents=True, exist_ok=True)
    try:
        with scenario.session(env) as run_trial:
            for index in range(count):
                rng = random.Random(_trial_seed(env.seed, scenario.name, index))
                trial = Trial(index, rng, _trial_dir(env.workdir, index))
                result.trials += 1
                try:
                    run_trial(trial)
                except BrokenPromise as exc:
                    result.fail(f"trial {index}: {exc}")
                except Exception as exc:  # any other escape is a broken promise too
                    result.fail(f"trial {index}: unexpected {_describe(exc)}")
                for key, value in trial.measurements.items():
                    result.measurements.setdefault(key, []).append(value)
                if progress is not None:
                    progress(f"{scenario.name}: trial {index + 1}/{count}")
    except Exception as exc:
        result.fail(f"set-up or tear-down: {_describe(exc)}")
    result.elapsed_s = time.monotonic() - started
    return result


def run_scenarios(
    scenarios: Sequence[Scenario],
    env_for: Callable[[Scenario], ChaosEnv],
    trials: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[ScenarioResult]:
    return [run_scenario(s, env_for(s), trials, progress) for s in scenarios]


def _trial_seed(seed: int, name: str, index: int) -> int:
    return (seed * 1_000_003 + zlib.crc32(name.encode()) * 7_919 + index) & 0xFFFFFFFF


def _trial_dir(workdir: Path, index: int) -> Path:
    path = workdir / f"trial-{index:04d}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _describe(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" at {Path(frame[0].filename).name}:{frame[0].lineno}" if frame else ""
    return f"{type(exc).__name__}: {exc}{where}"
