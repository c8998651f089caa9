"""Request body parsers of the REST API."""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with documents nested too deeply for Python's decoder refused.

    ``[[[[…`` a few thousand levels deep makes ``json.loads`` raise RecursionError,
    which DRF's parser lets through (a 500); here it is a parse error (400) like
    any other body that is not JSON.
    """

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply") from None
