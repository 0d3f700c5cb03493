"""``graphctx completion bash|zsh``: a static completion script written from the parser.

shtab (extra ``graphctx[completion]``) reads the argparse parser once and prints a script
the shell sources; nothing runs at completion time, unlike argcomplete, whose hook starts
``graphctx`` (a Python process) on every Tab.
"""

from __future__ import annotations

import argparse

from graphctx.extras import require_extra

__all__ = ["completion_script"]


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    require_extra("completion")
    import shtab

    script: str = shtab.complete(parser, shell=shell)
    return script if script.endswith("\n") else script + "\n"
