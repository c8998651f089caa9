"""The shell and Python examples of README.md and docs/*.md run as printed, against a live
server, and every path and link the docs name exists.

A code block is marked on the line before it: ``<!-- example: NAME -->`` runs it
(``<!-- example: NAME runs-until-stopped -->`` for one that never ends by itself: it
runs until it has printed its first line), ``<!-- not run: REASON -->`` says why it
cannot run here. An unmarked shell or Python block fails. The examples talk to
``http://127.0.0.1:8000``; here that address is a server of this module's own, started
as ``scripts/serve.sh`` starts one on a fresh machine: an empty database, no account,
the default rate limits. The README's Python example runs first, as a newcomer runs it,
and registers the account the other examples use.
A shell example's ``# {...}`` and ``# [...]`` comment lines are what it must print.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from tests.conftest import fresh_server_env, serving

REPO = Path(__file__).resolve().parents[2]
#: The pages whose examples run.
PAGES = ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))]
#: The pages whose paths and links are checked (the examples' pages and their neighbours).
LINKED_PAGES = [*PAGES, "bench/README.md", "CHANGELOG.md"]
DOCS_ADDRESS = "http://127.0.0.1:8000"
LOGIN = {"username": "robot", "password": "correct-horse-battery-staple-42"}
CODE_LANGUAGES = {"sh", "bash", "shell", "console", "python", "py"}
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
MARK = re.compile(
    r"<!-- (?:example: (?P<name>[\w-]+)(?P<forever> runs-until-stopped)?|not run: .+) -->"
)

#: What each Python example prints first (a shell example says it in its comments).
PRINTS = {
    "python-game": r"(won|lost|resigned): \d+ cards home in \d+ moves",
    "follow-board": r"\{'type': 'board', 'variant': 'bristol', 'date': '[\d-]{10}', 'board': \{",
}


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    code: str
    mark: str | None

    @property
    def name(self) -> str | None:
        found = MARK.fullmatch(self.mark or "")
        return found.group("name") if found else None

    @property
    def forever(self) -> bool:
        found = MARK.fullmatch(self.mark or "")
        return bool(found and found.group("forever"))


def code_blocks(page: str) -> list[Block]:
    """Every shell and Python block of ``page`` with the marker line before it, if any."""
    text = (REPO / page).read_text()
    blocks = []
    for found in FENCE.finditer(text):
        language = found.group(1)
        if language not in CODE_LANGUAGES:
            continue
        before = text[: found.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        line = text.count("\n", 0, found.start()) + 1
        mark = before if before.startswith("<!--") else None
        blocks.append(Block(page, line, language, found.group(2), mark))
    return blocks


EXAMPLES = [b for page in PAGES for b in code_blocks(page) if b.name]


def test_every_code_block_is_marked_run_or_not() -> None:
    blocks = [b for page in PAGES for b in code_blocks(page)]
    unmarked = [
        f"{b.page}:{b.line}" for b in blocks if b.mark is None or not MARK.fullmatch(b.mark)
    ]
    assert not unmarked, (
        f"mark these blocks <!-- example: NAME --> or <!-- not run: why -->: {unmarked}"
    )
    names = [b.name for b in EXAMPLES]
    assert len(names) == len(set(names)), names
    assert {"curl-game", "python-game", "follow-board"} <= set(names)


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a fresh server of the examples' own: nobody has registered on it."""
    # Dealt without the solver's certificate: quicker, and no example needs it.
    env = fresh_server_env(tmp_path_factory.mktemp("docs-server"), DAILY_SOLVER_NODES="0")
    with serving(env) as base:
        yield base


@pytest.fixture(scope="module")
def robot_token(docs_server: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A token of the account the README's Python example registers on the fresh server
    (run here first, as a newcomer would): no account is made behind the examples' back."""
    (block,) = [b for b in EXAMPLES if b.name == "python-game"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    run_example(block, docs_server, env, tmp_path_factory.mktemp("first-run"))
    answer = requests.post(
        f"{docs_server}/api/v1/auth/token/", json={**LOGIN, "name": "docs"}, timeout=10
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["token"]


def on_live_server(code: str, base: str) -> str:
    return code.replace(DOCS_ADDRESS, base).replace(
        DOCS_ADDRESS.replace("http", "ws", 1), base.replace("http", "ws", 1)
    )


def expected_output(code: str) -> list[str]:
    """A shell example's ``# {...}`` / ``# [...]`` comment lines: what it prints."""
    return [m.group(1) for m in re.finditer(r"^# ([\[{].*)$", code, re.MULTILINE)]


def run_example(block: Block, base: str, env: dict[str, str], cwd: Path) -> str:
    code = on_live_server(block.code, base)
    if block.language in {"python", "py"}:
        argv = [sys.executable, "-c", code]
    else:
        argv = ["bash", "-e", "-o", "pipefail", "-c", code]
    if not block.forever:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout
    with subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None
            first = process.stdout.readline()  # the server answers a socket within seconds
        finally:
            process.kill()
        assert first, process.stderr.read() if process.stderr else "no output"
        return first


@pytest.mark.parametrize("block", EXAMPLES, ids=lambda b: f"{b.page}:{b.name}")
def test_the_example_runs_as_printed(
    block: Block, docs_server: str, robot_token: str, tmp_path: Path
) -> None:
    env = {**os.environ, "PATIENCE_TOKEN": robot_token, "PYTHONUNBUFFERED": "1"}
    printed = run_example(block, docs_server, env, tmp_path)
    if block.language in {"python", "py"}:
        assert block.name in PRINTS, f"say in PRINTS what {block.name} prints"
        first = printed.splitlines()[0] if printed else ""
        assert re.match(PRINTS[block.name], first), printed
    else:
        assert printed.splitlines() == expected_output(block.code)


def test_the_python_game_ends_as_it_says(
    docs_server: str, robot_token: str, tmp_path: Path
) -> None:
    """What the README's bot prints is the game the server stored."""
    (block,) = [b for b in EXAMPLES if b.name == "python-game"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    printed = run_example(block, docs_server, env, tmp_path)
    headers = {"Authorization": f"Token {robot_token}"}
    games = requests.get(f"{docs_server}/api/v1/games/", headers=headers, timeout=10).json()
    game = games["results"][0]
    assert game["status"] in ("won", "lost", "resigned") and game["ply"] > 0
    assert printed == f"{game['status']}: {game['score']} cards home in {game['ply']} moves\n"


# Paths and links. A path is a word with a "/" whose first part is a top-level entry of
# the repository (``games/engine/log.py``, bench/README.md); addresses such as
# ``/api/v1/games/`` (a leading "/") and ``games/<id>/`` (only ``games/`` is a path) are not.
PATH = re.compile(r"(?<![\w/.:<{-])([\w.-]+/[\w./-]*)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
NOT_COMMITTED = {"test-artifacts/"}


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings."""
    text = FENCE.sub("", page.read_text())
    heads = re.findall(r"^#+ (.+)$", text, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


@pytest.mark.parametrize("page", LINKED_PAGES)
def test_every_path_and_link_the_page_names_exists(page: str) -> None:
    text = (REPO / page).read_text()
    top = {p.name for p in REPO.iterdir()}
    missing = []
    for path in (p.rstrip(".") for p in PATH.findall(text)):
        if path in NOT_COMMITTED or path.split("/")[0] not in top:
            continue
        if not (REPO / path).exists():
            missing.append(path)
    for link in LINK.findall(text):
        if re.match(r"\w+:", link):
            continue
        target, _, anchor = link.partition("#")
        file = (REPO / page).parent / target if target else REPO / page
        if not file.exists() or (anchor and file.suffix == ".md" and anchor not in anchors(file)):
            missing.append(link)
    assert not missing, f"{page} names what does not exist: {missing}"


def test_the_docs_map_lists_every_page() -> None:
    index = (REPO / "docs" / "index.md").read_text()
    pages = {p.name for p in (REPO / "docs").glob("*.md")} - {"index.md"}
    assert pages <= set(re.findall(r"\]\(([\w-]+\.md)\)", index))
    assert len((REPO / "README.md").read_text().splitlines()) <= 250
