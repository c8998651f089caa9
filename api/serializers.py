"""Input serializers of the REST API, and the outputs of accounts, moves and hints
(the shapes of games, dailies, boards and replays are ``api.shapes``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.shapes import GAME_STATUSES
from core.errors import InvalidInput
from games.engine import SEED_LIMIT, VARIANTS
from games.inputs import MOVE_MAX_LENGTH, move_parse, ply_parse


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine-readable code, e.g. `illegal_move`.")
    message = serializers.CharField(help_text="Explanation for people.")
    details = serializers.JSONField(
        help_text='Extra facts, e.g. `{"ply": 12}` for stale_ply, or the fields\' messages of '
        "a validation_error."
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorBodySerializer()


class UserSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.EmailField(allow_blank=True)
    date_joined = serializers.DateTimeField()


class RegisterInput(serializers.Serializer):
    username = serializers.RegexField(r"^[\w.@+-]+\Z", max_length=150)
    password = serializers.CharField(max_length=128, style={"input_type": "password"})
    email = serializers.EmailField(required=False, allow_blank=True, default="")


class LoginInput(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=128, style={"input_type": "password"})


class TokenLoginInput(LoginInput):
    name = serializers.CharField(
        max_length=100, required=False, default="api", help_text="A label for the token list."
    )


class CsrfSerializer(serializers.Serializer):
    csrf_token = serializers.CharField()


class TokenInput(serializers.Serializer):
    name = serializers.CharField(max_length=100)


class TokenSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="First characters of the key, to recognise it.")
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)


class NewTokenSerializer(TokenSerializer):
    token = serializers.CharField(help_text="The key. Shown only in this response: keep it.")


class VariantSerializer(serializers.Serializer):
    key = serializers.CharField()
    name = serializers.CharField()
    family = serializers.CharField()
    decks = serializers.IntegerField()
    cards = serializers.IntegerField()
    aces_removed = serializers.BooleanField()
    first_ace_on_foundation = serializers.BooleanField()
    refill_reserves = serializers.BooleanField()
    reserves_open_anytime = serializers.BooleanField()
    reversible_last_row = serializers.BooleanField()


class GameListQuery(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=GAME_STATUSES,
        required=False,
        help_text="Only games of this status: `playing` lists the games to resume.",
    )


class GameCreateInput(serializers.Serializer):
    variant = serializers.ChoiceField(choices=sorted(VARIANTS))
    seed = serializers.IntegerField(
        min_value=0,
        max_value=SEED_LIMIT - 1,
        required=False,
        help_text="0 <= seed < 2**64 (a decimal string is accepted); random if absent.",
    )


@extend_schema_field(
    {"type": "string", "minLength": 1, "maxLength": MOVE_MAX_LENGTH, "example": "t3-f"}
)
class MoveField(serializers.Field):
    """A move's notation, read by the parser the game socket uses (``games.inputs``): the
    text as sent, never trimmed or made from a number, so both doors accept the same."""

    def to_internal_value(self, data: Any) -> str:
        try:
            return move_parse(data)
        except InvalidInput as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value: str) -> str:
        return value


@extend_schema_field({"type": "integer", "minimum": 0})
class PlyField(serializers.Field):
    """The log entries the client has seen: a JSON integer (not ``"12"``), as on the socket."""

    def to_internal_value(self, data: Any) -> int:
        try:
            return ply_parse(data)
        except InvalidInput as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value: int) -> int:
        return value


class MoveInput(serializers.Serializer):
    move = MoveField(help_text="Spec notation, e.g. `t3-f`, `deal`.")
    ply = PlyField(help_text="Number of log entries the client has seen (the game's `ply`).")


class PlyInput(serializers.Serializer):
    ply = PlyField(help_text="Number of log entries the client has seen (the game's `ply`).")


class MoveLogSerializer(serializers.Serializer):
    ply = serializers.IntegerField()
    move = serializers.CharField(source="notation")
    at = serializers.DateTimeField(source="created_at")


class ReplayQuery(serializers.Serializer):
    """A replay's query: ``step``, the log entries after which to show the position."""

    step = serializers.IntegerField(min_value=0, max_value=10**6, required=False)
