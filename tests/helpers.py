"""Helpers shared by the in-process tests: socket headers, checks of JSON payloads.

Fixtures are in ``tests/conftest.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any


def token_headers(key: str) -> list[tuple[bytes, bytes]]:
    """ASGI headers of a socket that authenticates with the personal token ``key``."""
    return [(b"authorization", f"Token {key}".encode())]


def card_pattern(cards: list[str]) -> re.Pattern[str]:
    """Any of these card codes as a word of its own."""
    return re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, cards)) + r")(?![A-Za-z0-9])")


def walk(value: Any, path: str = "$") -> Iterator[tuple[str, str, Any]]:
    """Every (path, key, value) of a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield path, k, v
            yield from walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk(v, f"{path}[{i}]")
