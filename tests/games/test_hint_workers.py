"""games.hints heals: a killed solver worker costs at most the hint it was solving, and
workers and jobs end with the server process that started them (core.lifeline)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from core.errors import HintBusy, HintUnavailable
from games import hints
from games.engine import new_position
from games.services import games as game_services
from games.services import hints as hint_services
from tests.helpers import hint_answered, solved

#: A position the solver does not settle for many seconds (unknown at 140,000 nodes).
SLOW = ("royal-parade", 3)


@pytest.fixture(autouse=True)
def fresh_pool(settings: Any) -> Any:
    settings.HINT_SOLVER_NODES = 20_000
    settings.HINT_SOLVER_SECONDS = 60.0
    settings.HINT_DEADLINE_SECONDS = 120.0
    settings.HINT_PLAYER_INTERVAL_SECONDS = 0
    hints.shutdown()
    yield
    hints.shutdown()


def kill_workers() -> int:
    """SIGKILL every solver worker of this process, as the out-of-memory killer would."""
    workers = multiprocessing.active_children()
    for worker in workers:
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGKILL)
    for worker in workers:
        worker.join(10)
    time.sleep(0.5)  # the pool's manager thread sees the death and marks the pool broken
    return len(workers)


def test_a_worker_killed_while_idle_is_replaced_by_the_next_hint() -> None:
    assert hint_answered(new_position("bristol", seed=1), player=1).verdict
    assert kill_workers() == 1
    answer = hint_answered(new_position("bristol", seed=2), player=1)
    assert answer.nodes > 0  # solved now, by a new worker
    state = hints.pool_state()
    assert state["restarts"] == 1 and state["workers"] == 1 and not state["broken"]


def test_a_worker_killed_under_a_hint_answers_unavailable_and_the_next_works(
    settings: Any,
) -> None:
    settings.HINT_SOLVER_NODES = 10**9
    assert hint_answered(new_position("bristol", seed=1), player=1).verdict  # pool up
    slow = new_position(SLOW[0], seed=SLOW[1])
    pending = hints.hint_ask(slow, player=2)
    assert isinstance(pending, hints.Pending)
    time.sleep(0.5)  # the worker is solving
    kill_workers()
    solved(pending)
    with pytest.raises(HintUnavailable) as failed:
        hints.hint_result(slow)
    assert failed.value.code == "hint_unavailable" and failed.value.details["retry_after"] > 0
    settings.HINT_SOLVER_NODES = 20_000
    assert hint_answered(new_position("bristol", seed=3), player=1).nodes > 0
    assert hints.pool_state()["in_flight"] == 0


def test_no_thread_waits_for_a_solve() -> None:
    """The ask returns while the worker solves; the answer is stored by the pool's own
    callback, for any server process to give."""
    slow = new_position(SLOW[0], seed=SLOW[1])
    pending = hints.hint_ask(slow, player=1)
    assert isinstance(pending, hints.Pending) and pending.future is not None
    assert not pending.future.done()
    assert hints.hint_result(slow) == hints.Pending(pending.key)
    solved(pending)
    assert isinstance(hints.hint_result(slow), hints.Answer)


def test_a_solve_that_ends_between_the_result_s_two_reads_is_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A poll reads the cached answer, then the solve's state: a solve whose callback
    writes both in between (answer first, then "done") is answered, not "never asked"."""
    position = new_position("bristol", seed=7)
    read = hints._cached
    reads: list[str] = []

    def racing(key: str) -> hints.Answer | None:
        reads.append(key)
        if len(reads) == 1:  # the solve ends just after this read
            hints._shared("set", hints._cache_key(key), "t3-f", 60)
            hints._shared("set", hints._pending_key(key), f"{hints.DONE}5", 60)
            return None
        return read(key)

    monkeypatch.setattr(hints, "_cached", racing)
    assert hints.hint_result(position) == hints.Answer("won", "t3-f", 5)


SLEEPER = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-m", "core.lifeline", str(__import__("os").getpid()),
                          sys.argv[1]], cwd=sys.argv[2])
print(child.pid, flush=True)
time.sleep(120)
"""


def test_a_child_under_a_lifeline_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text("import time\ntime.sleep(120)\n")
    root = Path(__file__).resolve().parents[2]
    parent = subprocess.Popen(
        [sys.executable, "-c", SLEEPER, str(script), str(root)], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(1.0)
    assert _alive(child), "the job should run while its parent lives"
    parent.kill()
    parent.wait(10)
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the job outlived its parent"


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by init, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.django_db
def test_a_flood_of_hints_is_refused_before_any_work(
    settings: Any, user: Any, django_assert_num_queries: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many accounts ask, a server process takes ``HINT_RATE`` hint requests a
    second; the rest are refused with ``hint_busy`` without reading anything."""
    settings.HINT_RATE = 3.0
    game = game_services.practice_game_start(user=user, variant="bristol", seed=1)
    now = [1000.0]
    monkeypatch.setattr(hints, "_clock", lambda: now[0])
    for _ in range(3):  # the burst, taken by players of any account
        hints.hint_admit()
    with django_assert_num_queries(0), pytest.raises(HintBusy) as refused:
        hint_services.game_hint(game_id=game.pk, user=user)
    assert refused.value.details["retry_after"] >= 1
    now[0] += 0.4  # a third of a second refills one request
    assert hint_services.game_hint(game_id=game.pk, user=user).ply == 0
    with pytest.raises(HintBusy):
        hints.hint_admit()
