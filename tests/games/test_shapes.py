"""The shapes' planned rendering (``games.shapes._render``) against DRF's own
``to_representation`` of the same serializer: the same data, keys in the same order."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from rest_framework import serializers

from games import shapes


class _Inner(serializers.Serializer):
    name = serializers.CharField()
    when = serializers.DateTimeField(default_timezone=UTC, allow_null=True)


class _Outer(serializers.Serializer):
    number = serializers.IntegerField(source="box.number")
    title = serializers.CharField(source="box.title")  # a method: called, as DRF does
    flag = serializers.BooleanField()
    cards = serializers.ListField(child=serializers.CharField())
    piles = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
    inner = _Inner(allow_null=True)
    inners = _Inner(many=True)
    from_key = serializers.CharField(source="mapping.key")  # a mapping: read by key
    missing = serializers.CharField(allow_null=True, source="box.nowhere")
    optional = serializers.CharField(required=False, source="box.nowhere")
    computed = serializers.SerializerMethodField()

    def get_computed(self, value: Any) -> int:
        return len(value.cards)


@dataclass
class _Box:
    number: int

    def title(self) -> str:
        return f"box {self.number}"


@dataclass
class _Value:
    box: _Box
    flag: int
    cards: list[Any]
    piles: dict[Any, list[str] | None]
    inner: dict[str, Any] | None
    inners: list[dict[str, Any]]
    mapping: dict[str, str]


def _value(**changes: Any) -> _Value:
    inner = {"name": "a", "when": datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=UTC)}
    fields: dict[str, Any] = {
        "box": _Box(7),
        "flag": 1,
        "cards": ["AS", None, 3],
        "piles": {"t1": ["KH"], 2: None},
        "inner": inner,
        "inners": [inner, {"name": "b", "when": None}],
        "mapping": {"key": "from a key"},
    }
    return _Value(**{**fields, **changes})


@pytest.mark.parametrize("changes", [{}, {"inner": None, "inners": []}])
def test_planned_rendering_is_drfs(changes: dict[str, Any]) -> None:
    value = _value(**changes)
    planned = shapes._render(_Outer, value)
    assert planned == _Outer().to_representation(value)
    assert list(planned) == list(_Outer().to_representation(value))
    assert planned["title"] == "box 7" and "optional" not in planned


def test_planned_rendering_of_many_is_drfs() -> None:
    values = [_value(), _value(box=_Box(8))]
    assert shapes._render(_Outer, values, many=True) == _Outer(many=True).to_representation(values)


def test_a_required_attribute_missing_fails_as_with_drf() -> None:
    class Strict(serializers.Serializer):
        gone = serializers.CharField(source="box.nowhere")

    with pytest.raises(AttributeError):
        Strict().to_representation(_value())
    with pytest.raises(AttributeError):
        shapes._render(Strict, _value())
