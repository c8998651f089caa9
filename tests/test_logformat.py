"""Log lines a client cannot forge (patience_site/logformat.py), in both LOG_FORMATs: a
``%0A`` in a request's path, or any control character in any field a client fills,
is written escaped, so every record is one line (a traceback's lines indented)."""

from __future__ import annotations

import io
import json
import logging
import logging.config
import re
from _io import StringIO
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from core.tracing import RequestIdFilter

#: A line a client would like to see in the log, and where it puts it: after a line feed.
FORGED = "2026-12-05 00:00:00,000 INFO patience.request [x]: GET /admin/ 200"
PATH = "/api/v1/nothing%0A" + FORGED.replace(" ", "%20") + "%1B[2J"
SHOWN = "/api/v1/nothing\\n" + FORGED + "\\x1b[2J"  # as the log shows it
TEXT_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ ")


class Records(logging.Handler):
    """Counts the records, to compare with the lines written."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@pytest.fixture(params=["text", "json"])
def log(request: pytest.FixtureRequest) -> Iterator[tuple[str, io.StringIO, Records]]:
    """The format's name, what its handler (as ``LOGGING`` configures it) wrote, and a count
    of the records; on the root and ``django`` loggers, as configured."""
    config: dict[str, Any] = settings.LOGGING
    formats = config["formatters"]
    configurator = logging.config.DictConfigurator(config)
    formatter = configurator.configure_formatter(dict(formats[request.param]))
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    handler.addFilter(RequestIdFilter())
    records = Records()
    loggers = [logging.getLogger(), logging.getLogger("django")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.addHandler(records)
        logger.setLevel(logging.INFO)
    yield request.param, stream, records
    for logger, level in zip(loggers, levels, strict=True):
        logger.removeHandler(handler)
        logger.removeHandler(records)
        logger.setLevel(level)


def written(log: tuple[str, io.StringIO, Records]) -> list[str]:
    """The lines written; each checked to be one whole record of its format."""
    kind, stream, records = log
    lines = stream.getvalue().splitlines()
    assert len(lines) == records.count, lines
    for line in lines:
        if kind == "json":
            json.loads(line)
        else:
            assert TEXT_LINE.match(line), line
    return lines


@pytest.mark.django_db
def test_a_line_feed_in_a_path_cannot_start_a_line(
    client: Client, log: tuple[str, StringIO, Records]
) -> None:
    assert client.get(PATH).status_code == 404
    lines = written(log)
    assert len(lines) == 2  # Django's "Not Found", the request's line
    assert all(not line.startswith(FORGED) for line in lines)
    if log[0] == "json":
        request = next(json.loads(line) for line in lines if "route" in json.loads(line))
        assert request["path"] == SHOWN
    else:
        assert all(SHOWN in line for line in lines)


def test_every_field_and_argument_is_escaped(log: tuple[str, StringIO, Records]) -> None:
    agent = "curl\r\n" + FORGED + "\u2028\x85"
    logging.getLogger("patience.request").info(
        "login %s", "ann\n" + FORGED, extra={"user_agent": agent, "username": ["bob\nx"]}
    )
    (line,) = written(log)
    if log[0] == "text":
        assert line.endswith("login ann\\n" + FORGED)
    else:
        fields = json.loads(line)
        assert fields["message"] == "login ann\\n" + FORGED
        assert fields["user_agent"] == "curl\\r\\n" + FORGED + "\\u2028\\x85"
        assert fields["username"] == ["bob\\nx"]


def test_a_traceback_keeps_its_lines_but_none_starts_a_record(
    log: tuple[str, StringIO, Records],
) -> None:
    try:
        raise ValueError("bad input\n" + FORGED)
    except ValueError:
        logging.getLogger("patience.request").exception("failed")
    kind, stream, _ = log
    if kind == "json":
        (line,) = written(log)
        assert json.loads(line)["exc_info"].endswith("ValueError: bad input\n" + FORGED)
    else:
        first, *rest = stream.getvalue().splitlines()
        assert TEXT_LINE.match(first) and first.endswith("failed")
        assert rest[0] == "    Traceback (most recent call last):"
        assert rest[-1] == "    " + FORGED
        assert all(line.startswith("    ") for line in rest)
