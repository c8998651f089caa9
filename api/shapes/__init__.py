"""Every JSON shape a player may see, defined once: the one place to audit what leaves.

The shapes live at the edge: the domain (``games``) returns values and renders
nothing. Each shape is a DRF serializer that really renders: REST views, WebSocket
consumers, the events' wire forms (``api.events``) and the web pages call the
functions below, and the OpenAPI schema (drf-spectacular) is generated from the
same classes, so the documented and the served shapes are one. Selectors and
services hand over model instances and plain values; the views below
(``GameView``, ``DailyView``) hold the rules of what a player may see of them:

- **stock secrecy**: a position is the engine's public form (``public_json``),
  the stock only counted; a replay step shows a full position only once its
  day is over (``games.selectors.dailies.result_replay`` refuses earlier);
- **race start**: a race's game shows no card before the race starts (the
  countdown): its position is null and it has no legal moves, so every player
  sees the deal at the same moment;
- **reveal timing**: a game's deal (seed and deck order) once the game has ended,
  and for a daily's game once its day is over too (others are still playing
  it); a daily's seed, deck and par once its day is over;
- **race counts**: a race (``RaceView``) shows each player's progress and standing
  as counts and times only, never a card of anyone's game, so one view goes to
  every player and spectator while the race runs; a race game's deal and a race
  replay only once the race has finished (``games.selectors.races.race_replay``
  refuses earlier).

Split by noun: ``games``, ``dailies``, ``boards``, ``players``, ``replays``, ``races``
(``fields``: what they are made of). This package's names are the doors' entry points.
"""

from api.shapes.boards import BoardEntrySerializer, BoardSerializer, board_line, day_board
from api.shapes.dailies import (
    DailyOverviewSerializer,
    DailySerializer,
    daily,
    daily_overview,
)
from api.shapes.games import (
    GAME_STATUSES,
    GameStateSerializer,
    HintPendingSerializer,
    HintSerializer,
    MoveResultSerializer,
    game_state,
    game_states,
    hint,
    hint_pending,
    move_result,
)
from api.shapes.players import (
    AlltimeEntrySerializer,
    PlayerRecordSerializer,
    alltime_lines,
    player_record,
)
from api.shapes.races import (
    ProgressSerializer,
    RaceReplaySerializer,
    RaceSerializer,
    RatingLineSerializer,
    race,
    race_leaderboard,
    race_replay,
    races,
)
from api.shapes.replays import ReplaySerializer, replay

__all__ = [
    "GAME_STATUSES",
    "AlltimeEntrySerializer",
    "BoardEntrySerializer",
    "BoardSerializer",
    "DailyOverviewSerializer",
    "DailySerializer",
    "GameStateSerializer",
    "HintPendingSerializer",
    "HintSerializer",
    "MoveResultSerializer",
    "PlayerRecordSerializer",
    "ProgressSerializer",
    "RaceReplaySerializer",
    "RaceSerializer",
    "RatingLineSerializer",
    "ReplaySerializer",
    "alltime_lines",
    "board_line",
    "daily",
    "daily_overview",
    "day_board",
    "game_state",
    "game_states",
    "hint",
    "hint_pending",
    "move_result",
    "player_record",
    "race",
    "race_leaderboard",
    "race_replay",
    "races",
    "replay",
]
