"""Which of the project's modules one move passes through, and how often it crosses
between the domain (``games``) and the edge (``api``): a map of the move path.

    python bench/move_path.py                     # this tree
    python bench/move_path.py --tree /tmp/old     # another checkout (same venv)

Plays a few practice moves in one process on a fresh SQLite database, through REST (the
test client, so DRF's whole stack) and through the game socket (the consumer's worker
call, as daphne runs it), and records every call into a function of the tree's packages
with ``sys.setprofile``. Printed per door: the modules the last move entered, and the
crossings: calls whose caller is in one of ``games`` and ``api`` and whose callee is in
the other. It counts code, not time: the profile hook makes everything slow.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

PACKAGES = ("accounts", "api", "core", "games", "patience_site", "web")


def _module(frame: FrameType, root: str) -> str | None:
    """The tree's module a frame runs in, or None outside the tree's packages."""
    name = frame.f_globals.get("__name__", "")
    filename = frame.f_code.co_filename
    if not filename.startswith(root) or name.split(".")[0] not in PACKAGES:
        return None
    return str(name)


def traced(call: Callable[[], Any], root: str) -> tuple[set[str], int]:
    """``call()`` under a profile hook: the tree's modules entered and the crossings
    between ``games`` and ``api``."""
    modules: set[str] = set()
    crossings = 0

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal crossings
        if event != "call":
            return
        callee = _module(frame, root)
        if callee is None:
            return
        modules.add(callee)
        back = frame.f_back
        caller = _module(back, root) if back is not None else None
        if caller is not None:
            pair = {caller.split(".")[0], callee.split(".")[0]}
            crossings += pair == {"api", "games"}

    sys.setprofile(hook)
    try:
        call()
    finally:
        sys.setprofile(None)
    return modules, crossings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=str(Path(__file__).resolve().parent.parent))
    args = parser.parse_args()
    root = str(Path(args.tree).resolve())
    sys.path.insert(0, root)
    os.chdir(root)
    database = Path(tempfile.mkdtemp()) / "move_path.sqlite3"
    os.environ.update(
        DJANGO_SETTINGS_MODULE="patience_site.settings", DATABASE_URL=f"sqlite:///{database}"
    )
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.test import APIClient

    call_command("migrate", verbosity=0)
    from api.consumers import GameConsumer

    user = get_user_model().objects.create_user(username="path", password="x" * 16)
    client = APIClient()
    client.force_authenticate(user)
    game = client.post("/api/v1/games/", {"variant": "bristol", "seed": 7}, format="json").json()

    consumer = GameConsumer()
    consumer.game_id, consumer.user, consumer.sent = game["id"], user, None

    def door_move(door: str) -> Callable[[], Any]:
        """The next move through ``door``, as a call to trace."""
        state = client.get(f"/api/v1/games/{game['id']}/").json()
        move, ply = state["legal_moves"][0], state["ply"]
        if door == "ws":
            return lambda: consumer._apply("move", move, ply)
        body = {"move": move, "ply": ply}
        return lambda: client.post(f"/api/v1/games/{game['id']}/moves/", body, format="json")

    for door in ("rest", "ws"):
        door_move(door)()  # warm: first calls import and cache
        modules, crossings = traced(door_move(door), root)
        print(f"{door}: {len(modules)} modules, {crossings} api/games crossings")
        for name in sorted(modules):
            print(f"  {name}")


if __name__ == "__main__":
    main()
