"""Log formats whose lines a client cannot forge (``LOGGING`` in settings, ``LOG_FORMAT``).

A request's path, a user agent, a username or an exception's message can hold what a
client sent, ``%0A`` (a line feed) in a path included. Written as is, a line feed in
the text format starts a line of the client's choosing, and a terminal's escape
sequence (ESC) or a Unicode line separator misleads whoever reads the log. So every
field is written with its control characters escaped (``\\n``, ``\\x1b``, ``\\u2028``):
in the text format the message and every field of the line; in the JSON format every
value (JSON itself escapes only the C0 controls). A traceback keeps its lines, each
escaped and, in the text format, indented: only a record's first line starts at the
line's beginning.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pythonjsonlogger.orjson import OrjsonFormatter

#: C0 controls, DEL, C1 controls (NEL among them) and the Unicode line and paragraph
#: separators.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Fields that hold a traceback: several lines by design.
_TRACEBACKS = ("exc_info", "stack_info")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def escaped(text: str) -> str:
    """``text`` with every control character written as its escape: one line."""
    return _CONTROLS.sub(_escape, text)


def _escaped_lines(text: str) -> list[str]:
    return [escaped(line) for line in text.split("\n")]


def _has_controls(value: Any) -> bool:
    return isinstance(value, str) and _CONTROLS.search(value) is not None


def _escaped_value(value: Any) -> Any:
    if isinstance(value, str):
        return escaped(value)
    if isinstance(value, dict):
        return {key: _escaped_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_escaped_value(item) for item in value]
    return value


class TextFormatter(logging.Formatter):
    """``logging.Formatter`` for people, with every field escaped and tracebacks indented."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        fields = record.__dict__  # the line shows text fields (the message among them)
        dirty = {key: escaped(value) for key, value in fields.items() if _has_controls(value)}
        if dirty:  # a copy of the record, with those fields escaped
            record = logging.makeLogRecord({**fields, **dirty})
        return super().formatMessage(record)

    def formatException(self, ei: Any) -> str:
        return "\n".join(f"    {line}" for line in _escaped_lines(super().formatException(ei)))

    def formatStack(self, stack_info: str) -> str:
        return "\n".join(f"    {line}" for line in _escaped_lines(super().formatStack(stack_info)))


class JsonFormatter(OrjsonFormatter):
    """One JSON object a line (python-json-logger's orjson formatter), every value escaped;
    a traceback's line feeds are left to JSON's own escape."""

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        dirty = {
            key: _escaped_traceback(value) if key in _TRACEBACKS else _escaped_value(value)
            for key, value in log_data.items()
            if _has_controls(value) or isinstance(value, dict | list | tuple)
        }
        return {**log_data, **dirty} if dirty else log_data


def _escaped_traceback(value: Any) -> Any:
    return "\n".join(_escaped_lines(value)) if isinstance(value, str) else _escaped_value(value)
