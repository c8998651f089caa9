"""The account models moved to their app in the migration state only: no table moves."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from accounts.models import ApiToken, UsernameSkeleton

pytestmark = pytest.mark.django_db(transaction=True)  # SQLite's schema editor needs no atomic

MOVE = [("games", "0010_move_account_models"), ("accounts", "0001_initial")]


@pytest.mark.parametrize(("app", "migration"), MOVE)
def test_the_move_runs_no_sql(app: str, migration: str) -> None:
    out = StringIO()
    call_command("sqlmigrate", app, migration, stdout=out)
    statements = [
        line
        for line in out.getvalue().splitlines()
        if line.strip() and not line.startswith("--") and line not in ("BEGIN;", "COMMIT;")
    ]
    assert statements == []


def test_the_models_keep_the_tables_games_made() -> None:
    assert ApiToken._meta.db_table == "games_apitoken"
    assert UsernameSkeleton._meta.db_table == "games_usernameskeleton"
