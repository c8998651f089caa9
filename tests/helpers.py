"""Helpers shared by the in-process tests (fixtures are in ``tests/conftest.py``)."""

from __future__ import annotations


def token_headers(key: str) -> list[tuple[bytes, bytes]]:
    """ASGI headers of a socket that authenticates with the personal token ``key``."""
    return [(b"authorization", f"Token {key}".encode())]
