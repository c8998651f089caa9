"""Helpers shared by the in-process tests: socket headers, checks of JSON payloads.

Fixtures are in ``tests/conftest.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
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


#: The keys of every page of a list (``api.pagination.CursorPage``).
PAGE_KEYS = {"next", "previous", "results"}


def pages(
    client: Any,
    url: str,
    params: dict[str, Any] | None = None,
    *,
    between: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Every page of a list, from its first through each page's ``next`` link; ``between``
    runs after each page but the last (with the count of pages read)."""
    response = client.get(url, params or {})
    seen = []
    while True:
        assert response.status_code == 200, response.content
        page = response.json()
        assert set(page) >= PAGE_KEYS
        seen.append(page)
        if page["next"] is None:
            return seen
        if between is not None:
            between(len(seen))
        response = client.get(page["next"])


def rows(client: Any, url: str, params: dict[str, Any] | None = None, **kwargs: Any) -> list[Any]:
    """Every row of a list, page after page (``pages``)."""
    return [row for page in pages(client, url, params, **kwargs) for row in page["results"]]
