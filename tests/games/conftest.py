"""Fixtures shared by the tests of games."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def staff_client(client: Any, make_user: Any) -> Any:
    """A client signed in as a superuser, for the admin."""
    boss = make_user("boss", is_staff=True, is_superuser=True)
    client.force_login(boss)
    return client
