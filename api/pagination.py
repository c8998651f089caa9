"""The one way every list is paged: DRF's cursor pages, configured once.

A client sends ``?limit=`` (1 to ``max_page_size``; larger is capped, anything else
gives ``page_size``) and follows the page's ``next`` or ``previous`` link, whose
``?cursor=`` is opaque. Every page is ``{"next", "previous", "results"}``.

Each list names its order in its view's ``ordering`` (DRF's convention, as for
``OrderingFilter``), and that order's first field is unique (a rating, a float,
nearly so: DRF's offset then parts equal ones): the cursor holds that field's
value, so a row inserted between two pages is neither shown twice nor makes the
walk skip one. A list whose length is bounded by nature (the variants; a day's
dailies, one per variant) is not paged, nor the race lobby (at most 50, in an
order that moves as races fill).

It lives in ``api`` beside ``api.shapes``: the API and the web pages both page with
it (the web pages sit above the API).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request

if TYPE_CHECKING:  # rest_framework.generics imports this module (its default paginator)
    from rest_framework.generics import GenericAPIView


class CursorPage(CursorPagination):
    """DEFAULT_PAGINATION_CLASS: ``cursor`` and ``limit`` in; ``next``, ``previous`` and
    ``results`` out."""

    cursor_query_param = "cursor"
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 1000
    #: Set by each list (its view's ``ordering``); a web page sets it on its instance.
    ordering: Sequence[str] | str | None = None  # type: ignore[assignment]
    invalid_cursor_message = "not a cursor of this list: follow a page's next or previous link"

    def get_ordering(self, request: Request, queryset: Any, view: Any = None) -> tuple[str, ...]:
        """The list's own order: its view's ``ordering``, else this instance's."""
        if getattr(view, "ordering", None):
            self.ordering = view.ordering
        return tuple(super().get_ordering(request, queryset, view))

    def paginate_queryset(
        self, queryset: Any, request: Request, view: Any = None
    ) -> list[Any] | None:
        """A page; a cursor that is not one of this list's is 400 ``validation_error``.

        DRF answers a cursor it cannot decode with 404, and one whose position
        does not fit the ordering's field fails in the query: both are the
        client's input, not a missing object.
        """
        try:
            return super().paginate_queryset(queryset, request, view)
        except (NotFound, ValueError, DjangoValidationError):
            if self.cursor_query_param not in request.query_params:
                raise
            raise ValidationError(
                {self.cursor_query_param: [self.invalid_cursor_message]}
            ) from None

    def decode_cursor(self, request: Request) -> Cursor | None:
        """DRF's cursor, refused (then 400) if its position holds a NUL, which no key holds
        and PostgreSQL refuses in any text."""
        cursor = super().decode_cursor(request)
        if cursor is not None and "\x00" in str(cursor.position or ""):
            raise NotFound(self.invalid_cursor_message)
        return cursor

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        """DRF's parameters, with ``limit``'s bounds and default stated."""
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": self.max_page_size,
                    "default": self.page_size,
                }
                parameter["description"] = (
                    f"Rows per page, 1 to {self.max_page_size} (larger is capped); "
                    f"{self.page_size} if absent."
                )
            else:
                parameter["description"] = (
                    "Opaque: take it from a page's `next` or `previous` link, never build it."
                )
        return parameters

    def paginate_sequence(
        self, items: Sequence[Any], key: Callable[[Any], int], request: Request
    ) -> dict[str, Any]:
        """A page of ``items``, a list in the order of its unique integer ``key``, with
        ``next`` and ``previous`` links whose cursors page as a queryset's do: for a list
        kept in one value (a game's packed log), not in rows."""
        self.request, self.base_url = request, request.build_absolute_uri()
        size = self.get_page_size(request) or self.page_size
        try:
            cursor = self.decode_cursor(request)
            at = None if cursor is None or cursor.position is None else int(cursor.position)
        except (NotFound, ValueError):
            raise ValidationError(
                {self.cursor_query_param: [self.invalid_cursor_message]}
            ) from None
        reverse = cursor is not None and cursor.reverse
        keys = [key(item) for item in items]
        if at is None:
            start, end = 0, min(size, len(items))
        elif reverse:
            end = bisect_left(keys, at)
            start = max(0, end - size)
        else:
            start = bisect_right(keys, at)
            end = min(len(items), start + size)

        def link(position: int, back: bool) -> str:
            # DRF's cursors carry their position as text (its stub says int).
            cursor = Cursor(offset=0, reverse=back, position=str(position))  # type: ignore[arg-type]
            return self.encode_cursor(cursor)

        return {
            "next": link(keys[end - 1], False) if end < len(items) and end > start else None,
            "previous": link(keys[start], True) if start > 0 and end > start else None,
            "results": list(items[start:end]),
        }


def page_parameters() -> list[OpenApiParameter]:
    """``cursor`` and ``limit`` for the schema of a paged view whose answer is more than
    a page (a day's board): the same parameters drf-spectacular takes from the paginator
    for a plain list."""
    return [
        OpenApiParameter(
            p["name"], p["schema"], OpenApiParameter.QUERY, description=p["description"]
        )
        for p in CursorPage().get_schema_operation_parameters(view=None)
    ]


def paginator_of(view: GenericAPIView) -> CursorPage:
    """A paged view's paginator: the one class every list pages with."""
    paginator = view.paginator
    assert isinstance(paginator, CursorPage), "DEFAULT_PAGINATION_CLASS is CursorPage"
    return paginator
