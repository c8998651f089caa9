"""Input and output serializers of the REST API (outputs document the JSON shapes)."""

from __future__ import annotations

from rest_framework import serializers

from games.engine import SEED_LIMIT, VARIANTS
from games.models import Deal


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


#: The engine's statuses and the server's ends: ``expired`` (a ranked daily left unfinished
#: when its day ended; a race game still playing at the race's time limit) and
#: ``move_limit`` (the log reached ``GAME_MAX_LOG`` entries).
GAME_STATUSES = ["playing", "won", "lost", "resigned", "expired", "move_limit"]


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


class MoveInput(serializers.Serializer):
    move = serializers.CharField(max_length=20, help_text="Spec notation, e.g. `t3-f`, `deal`.")
    ply = serializers.IntegerField(
        min_value=0, help_text="Number of log entries the client has seen (the game's `ply`)."
    )


class PlyInput(serializers.Serializer):
    ply = serializers.IntegerField(min_value=0)


class PositionSerializer(serializers.Serializer):
    piles = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Every pile but the stock, by the spec's pile ids, cards bottom to top.",
    )
    stock = serializers.IntegerField(help_text="Cards left in the stock (never their faces).")


class DealRevealSerializer(serializers.Serializer):
    seed = serializers.CharField()
    deck = serializers.ListField(child=serializers.CharField())


class GameStateSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    variant = serializers.CharField()
    kind = serializers.ChoiceField(choices=Deal.Kind.choices)
    date = serializers.DateField(allow_null=True)
    status = serializers.ChoiceField(choices=GAME_STATUSES)
    score = serializers.IntegerField(help_text="Cards home.")
    max_score = serializers.IntegerField()
    ply = serializers.IntegerField(help_text="Log entries so far (moves and undos).")
    moves_on_board = serializers.IntegerField(help_text="Moves not undone.")
    ranked = serializers.BooleanField()
    assisted = serializers.BooleanField()
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    elapsed_ms = serializers.IntegerField(help_text="Measured on the server.")
    position = PositionSerializer()
    legal_moves = serializers.ListField(child=serializers.CharField())
    can_undo = serializers.BooleanField()
    deal = DealRevealSerializer(
        allow_null=True,
        help_text="Seed and deck order once the game has ended; for a daily's game, once its "
        "day is over as well (others are still playing it), so null until then.",
    )


class MoveResultSerializer(GameStateSerializer):
    duplicate = serializers.BooleanField(
        help_text="True when this exact move was already applied at that ply (a safe retry)."
    )


class MoveLogSerializer(serializers.Serializer):
    ply = serializers.IntegerField()
    move = serializers.CharField(source="notation")
    at = serializers.DateTimeField(source="created_at")


class HintSerializer(serializers.Serializer):
    ply = serializers.IntegerField(help_text="The game's ply the hint is for.")
    verdict = serializers.ChoiceField(
        choices=["won", "lost", "unknown"],
        help_text="`won`: still winnable (see `move`); `lost`: no longer winnable; "
        "`unknown`: the solver's limit was reached.",
    )
    move = serializers.CharField(allow_null=True, help_text="Next move of a winning line.")
    nodes = serializers.IntegerField(help_text="Positions the solver generated.")
