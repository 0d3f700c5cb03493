"""The generated initial password, and a string type whose ``repr`` hides it."""

from __future__ import annotations

import secrets
import string

__all__ = ["PASSWORD_LENGTH", "Secret", "initial_password"]

PASSWORD_LENGTH = 24  # 24 alphanumerics: about 143 bits
_PASSWORD_ALPHABET = string.ascii_letters + string.digits


class Secret(str):
    """A string whose ``repr`` hides it: pytest prints the arguments of every frame of a
    failing fixture, and ``subprocess.TimeoutExpired`` prints its command line."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "'***'"


def initial_password() -> Secret:
    """A fresh password that no command line parser can read as an option.

    ``neo4j-admin dbms set-initial-password <password>`` takes it as an argument, and one
    starting with ``-`` is an (unknown) option there: letters and digits only.
    """
    return Secret("".join(secrets.choice(_PASSWORD_ALPHABET) for _ in range(PASSWORD_LENGTH)))
