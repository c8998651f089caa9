"""The compiled German catalogs (.mo, committed) match their sources (.po).

Compiling needs GNU gettext, which the servers do not have: the .mo files are
committed. These tests read both with the standard library only, so a .po edited
without running ``manage.py compilemessages`` fails here.
"""

from __future__ import annotations

import ast
import gettext
from pathlib import Path
from typing import Any

import pytest

LOCALE = Path(__file__).resolve().parents[2] / "locale" / "de" / "LC_MESSAGES"
DOMAINS = ["django", "djangojs"]


def po_entries(path: Path) -> list[dict]:
    """Entries of a .po file: msgctxt, msgid, msgid_plural, msgstr (list), fuzzy."""
    entries: list[dict] = []
    cur: dict[str, Any] | None = None
    field: tuple[str, int] | None = None

    def flush() -> None:
        nonlocal cur
        if cur is not None and cur["msgid"] is not None:
            entries.append(cur)
        cur = None

    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            flush()
            continue
        if cur is None:
            cur = {
                "msgctxt": None,
                "msgid": None,
                "msgid_plural": None,
                "msgstr": {},
                "fuzzy": False,
            }
        if line.startswith("#,") and "fuzzy" in line:
            cur["fuzzy"] = True
        if line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        if line.startswith('"'):
            value = ast.literal_eval(line)
            assert field is not None, line
            name, index = field
            if name == "msgstr":
                cur["msgstr"][index] += value
            else:
                cur[name] += value
            continue
        value = ast.literal_eval(rest)
        if keyword.startswith("msgstr"):
            index = int(keyword[7:-1]) if "[" in keyword else 0
            cur["msgstr"][index] = value
            field = ("msgstr", index)
        else:
            cur[keyword] = value
            field = (keyword, 0)
    flush()
    return entries


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_message_is_translated(domain: str) -> None:
    entries = [e for e in po_entries(LOCALE / f"{domain}.po") if e["msgid"]]
    assert entries
    for e in entries:
        assert not e["fuzzy"], e["msgid"]
        assert all(e["msgstr"].values()), f"untranslated: {e['msgid']!r}"


@pytest.mark.parametrize("domain", DOMAINS)
def test_compiled_catalog_matches_the_source(domain: str) -> None:
    with open(LOCALE / f"{domain}.mo", "rb") as fh:
        mo = gettext.GNUTranslations(fh)
    entries = [e for e in po_entries(LOCALE / f"{domain}.po") if e["msgid"]]
    for e in entries:
        ctx = e["msgctxt"]
        if e["msgid_plural"] is None:
            got = mo.pgettext(ctx, e["msgid"]) if ctx else mo.gettext(e["msgid"])
            assert got == e["msgstr"][0], f"{domain}.mo is stale for {e['msgid']!r}"
        else:
            for n, index in ((1, 0), (2, 1)):
                got = mo.ngettext(e["msgid"], e["msgid_plural"], n)
                assert got == e["msgstr"][index], f"{domain}.mo is stale for {e['msgid']!r}"
    # Nothing in the .mo that the .po no longer has (the empty header key aside).
    keys = {k for k in mo._catalog if k != ""}  # type: ignore[attr-defined]  # not in typeshed
    expected = set()
    for e in entries:
        msgid = f"{e['msgctxt']}\x04{e['msgid']}" if e["msgctxt"] else e["msgid"]
        if e["msgid_plural"] is None:
            expected.add(msgid)
        else:
            expected |= {(msgid, 0), (msgid, 1)}
    assert keys == expected, f"{domain}.mo has other messages than {domain}.po"


def test_placeholders_survive_translation() -> None:
    import re

    for domain in DOMAINS:
        for e in po_entries(LOCALE / f"{domain}.po"):
            if not e["msgid"]:
                continue
            want = sorted(re.findall(r"%\(\w+\)s", e["msgid_plural"] or e["msgid"]))
            for text in e["msgstr"].values():
                assert sorted(re.findall(r"%\(\w+\)s", text)) == want, e["msgid"]


def test_every_literal_text_of_the_pages_is_in_a_catalog() -> None:
    """A {% trans %} in a template or a gettext() in a script that makemessages missed."""
    import re

    web = Path(__file__).resolve().parents[2] / "web"
    known = {e["msgid"] for d in DOMAINS for e in po_entries(LOCALE / f"{d}.po")}
    missing = []
    for path in (web / "templates").rglob("*.html"):
        for text in re.findall(r'{%\s*trans\s+"([^"]+)"', path.read_text(encoding="utf-8")):
            if text not in known:
                missing.append((path.name, text))
    calls = r'(?:gettext|ngettext)\(\s*"((?:[^"\\]|\\.)*)"|pgettext\(\s*"[^"]*",\s*"([^"]*)"'
    for path in (web / "static").rglob("*.js"):
        for a, b in re.findall(calls, path.read_text(encoding="utf-8")):
            text = a or b
            if text and text not in known:
                missing.append((path.name, text))
    assert not missing, f"run makemessages and translate: {missing}"
