"""Shared start-up of the atheris (libFuzzer) harnesses in this folder.

Every harness runs as ``python tools/fuzz/fuzz_<target>.py [libFuzzer flags] [corpus dirs]``.
Without corpus folders it uses ``.fuzz/corpus/<target>/`` (git-ignored), seeded from the
harness's examples, so repeated runs build on what earlier runs found. Crash and timeout
reproducers go to ``.fuzz/crashes/<target>/`` unless ``-artifact_prefix=`` says otherwise;
replay one with ``python tools/fuzz/fuzz_<target>.py .fuzz/crashes/<target>/crash-<sha>``.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

import atheris

__all__ = ["FUZZ_ROOT", "instrumented", "run"]

FUZZ_ROOT = Path(__file__).resolve().parents[2] / ".fuzz"
DEFAULT_FLAGS = ("-timeout=10", "-rss_limit_mb=2048", "-max_len=65536")


def instrumented(*names: str) -> list[ModuleType]:
    """Fresh copies of the ``names`` modules, instrumented for coverage, and nothing else.

    ``atheris.instrument_imports()`` would instrument everything the target pulls in
    (pydantic, numpy, the whole graphctx package): 15 s of start-up and coverage noise. So
    the package loads plainly first, then only the target modules load again, instrumented,
    in the order given (a later one then sees the instrumented copy of an earlier one).
    """
    importlib.import_module("graphctx")
    for name in names:
        importlib.import_module(name)
        sys.modules.pop(name)
    with atheris.instrument_imports(include=list(names)):
        return [importlib.import_module(name) for name in names]


def run(target: str, test_one_input: Callable[[bytes], None], seeds: Iterable[bytes]) -> None:
    """Parse the command line, seed the corpus, and fuzz until libFuzzer stops."""
    argv = list(sys.argv)
    flags = [arg for arg in argv[1:] if arg.startswith("-")]
    paths = [arg for arg in argv[1:] if not arg.startswith("-")]
    crashes = FUZZ_ROOT / "crashes" / target
    crashes.mkdir(parents=True, exist_ok=True)
    if not any(flag.startswith("-artifact_prefix=") for flag in flags):
        flags.append(f"-artifact_prefix={crashes}/")
    flags.extend(
        flag
        for flag in DEFAULT_FLAGS
        if not any(given.startswith(flag.split("=")[0] + "=") for given in flags)
    )
    if not paths:
        corpus = FUZZ_ROOT / "corpus" / target
        corpus.mkdir(parents=True, exist_ok=True)
        for seed in seeds:
            (corpus / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
        paths = [str(corpus)]
    atheris.Setup([argv[0], *flags, *paths], test_one_input)
    atheris.Fuzz()
