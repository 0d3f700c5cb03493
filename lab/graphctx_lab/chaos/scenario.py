"""What a chaos scenario is: a named promise, a set-up, and trials that may break it."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = ["BrokenPromise", "ChaosEnv", "Scenario", "Trial", "TrialRunner"]


class BrokenPromise(AssertionError):
    """A trial observed the scenario's promise not holding; the message says how."""


@dataclass
class Trial:
    """One attempt: its index, its own seeded random source and a place for measurements."""

    index: int
    rng: random.Random
    workdir: Path  # empty directory owned by this trial
    measurements: dict[str, float] = field(default_factory=dict)

    def measure(self, key: str, value: float) -> None:
        """Record a number (ms, counts); the report gives p50 / p95 / max over the trials."""
        self.measurements[key] = value

    def check(self, condition: bool, message: str) -> None:
        if not condition:
            raise BrokenPromise(message)


TrialRunner = Callable[[Trial], None]


@dataclass(frozen=True)
class ChaosEnv:
    """What the run provides to scenarios."""

    workdir: Path  # the scenario's own directory (trials get subdirectories)
    seed: int
    data_dir: Path | None = None  # ../shared/data when present; scenarios must not need it
    # Starts a dedicated, restartable Neo4j server; None when Neo4j scenarios are not run.
    neo4j: Callable[[], AbstractContextManager[Any]] | None = None


class Scenario(Protocol):
    """A promise under fault: ``session`` sets up once and yields the trial runner."""

    @property
    def name(self) -> str: ...

    @property
    def promise(self) -> str:
        """One sentence: what must hold in every trial."""
        ...

    @property
    def default_trials(self) -> int: ...

    @property
    def needs_neo4j(self) -> bool: ...

    def session(self, env: ChaosEnv) -> AbstractContextManager[TrialRunner]: ...


@dataclass(frozen=True)
class FunctionScenario:
    """A :class:`Scenario` from a generator-based set-up function (the common case)."""

    name: str
    promise: str
    default_trials: int
    setup: Callable[[ChaosEnv], Iterator[TrialRunner]]
    needs_neo4j: bool = False

    def session(self, env: ChaosEnv) -> AbstractContextManager[TrialRunner]:
        from contextlib import contextmanager

        return contextmanager(self.setup)(env)
