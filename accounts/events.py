"""The accounts' one event: a token or session no longer admits its sockets."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import ClassVar

from core.events import Event, emit


def token_group(token_id: int) -> str:
    """Channel group of the game sockets opened with one personal token."""
    return f"token.{token_id}"


def session_group(session_key: str) -> str:
    """Channel group of the game sockets opened with one browser session.

    Named by a digest of the key: the key itself is a credential and stays out of Redis.
    """
    return "session." + hashlib.sha256(session_key.encode()).hexdigest()[:40]


@dataclass(frozen=True)
class AuthRevoked(Event):
    """The token or session a game socket opened with no longer admits: it closes (4401)."""

    TYPE: ClassVar[str] = "auth.revoked"

    reason: str


def token_revoked(*, token_id: int) -> None:
    """After commit: the sockets opened with this token must close (it no longer admits)."""
    emit(AuthRevoked(reason="token revoked"), token_group(token_id))


def session_ended(*, session_key: str) -> None:
    """After commit: the sockets opened with this session must close (signed out)."""
    emit(AuthRevoked(reason="signed out"), session_group(session_key))
