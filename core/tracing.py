"""The request id: one id per HTTP request or socket session, from the client's
``X-Request-ID`` or made here, carried by every log record and event of that request.

It lives in a context variable, so the threads a request's work runs in (Django's, and
the worker threads of ``sync_to_async``, which copy the context) all see it.
"""

from __future__ import annotations

import logging
import re
import secrets
from contextvars import ContextVar

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

#: What a client's id may look like: anything else (too long, odd characters that could
#: forge log lines) is replaced by one of ours.
_ACCEPTED = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def request_id_from(header: str | None) -> str:
    """The client's ``X-Request-ID`` if it is a plain token, else a new id."""
    if header and _ACCEPTED.fullmatch(header):
        return header
    return secrets.token_hex(16)


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` (None outside a request) to every record of a handler, and keeps
    the request out of it.

    Django's ``django.request`` records carry the request object, whose text is its whole
    URL, query included (``?token=`` of a socket or a careless client): a JSON formatter
    writes every attribute of a record, so that one becomes the method and the path. They
    are written after the middleware has ended, so their id comes from the request.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        found = request_id.get() or getattr(request, "request_id", None)
        record.request_id = found or getattr(record, "request_id", None)  # a second handler's
        if request is not None and not isinstance(request, str):
            method, path = getattr(request, "method", None), getattr(request, "path", "")
            record.request = f"{method} {path}"
        return True
