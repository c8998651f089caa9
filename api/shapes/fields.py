"""What every shape is made of: card lists, moments in UTC, and one renderer a shape."""

from __future__ import annotations

from datetime import UTC
from functools import cache
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

if TYPE_CHECKING:
    pass


def cards(**kwargs: Any) -> serializers.ListField:
    """A list of card codes or move notations."""
    return serializers.ListField(child=serializers.CharField(), **kwargs)


def instant(**kwargs: Any) -> serializers.DateTimeField:
    """A moment in time, always in UTC (`Z`), whatever the server's time zone."""
    return serializers.DateTimeField(default_timezone=UTC, **kwargs)


@cache
def renderer(shape: type[serializers.Serializer], many: bool) -> serializers.BaseSerializer:
    """The one serializer that renders every value of a shape.

    A new serializer copies its declared fields, which costs several times the
    rendering itself (three quarters of a game state's); ``to_representation``
    keeps no state, so one instance serves every call and thread.
    """
    return shape(many=many)


def render(shape: type[serializers.Serializer], value: Any, *, many: bool = False) -> Any:
    """``value`` (a list of values if ``many``) rendered as the JSON data of ``shape``."""
    return renderer(shape, many).to_representation(value)
