"""A race's socket: the race as it runs, for players and spectators."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from api import events, shapes
from api.consumers.base import (
    CLOSE_NOT_FOUND,
    BadMessage,
    Consumer,
    bad,
    dumps,
    instant,
)
from api.shapes.races import viewer_id
from core import clock
from core.errors import NotFound
from games.events import race_group
from games.selectors import races as race_selectors
from games.selectors.race_state import viewer_game
from games.services import races as race_services

# -- a race -------------------------------------------------------------------------------


class RaceConsumer(Consumer):
    """A race as it runs: roster, countdown, everyone's progress, the end and standings."""

    async def connect(self) -> None:
        self.ready = False
        self.code = self.scope["url_route"]["kwargs"]["code"]
        #: The status a wake-up just showed, which the change event it caused would repeat.
        self.woke_to: str | None = None
        await self.accept()
        # Join before reading, so no change between the read and the join is missed.
        await self.join(race_group(self.code))
        try:
            text, self.status, moments = await self.db(self._race)
        except NotFound as exc:
            await self.close(code=CLOSE_NOT_FOUND, reason=str(exc)[:100])
            return
        self.ready = True
        self.watch()
        await self.send(text_data=text)
        self.wake_at(moments)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if not self.ready or await self.flooded():
            return
        try:
            if self.read_frame(text_data).get("type") != "ping":
                raise BadMessage("'type' must be ping")
        except BadMessage as exc:
            await self.refuse(bad(str(exc)))
            return
        await self.send(text_data=dumps({"type": "pong"}))

    async def refuse(self, body: dict[str, Any]) -> None:
        await self.send(text_data=dumps({"type": "error", **body}))

    async def race_changed(self, message: dict[str, Any]) -> None:
        """Group event: the roster or status changed (maybe in another process); not sent
        again when this socket's wake-up just showed it (a race it finished at its limit)."""
        if self.ready:
            you = viewer_game(message["games"], viewer_id(self.scope.get("user")))
            frame = events.race_frame(message, you)
            text, self.status, moments = self._sent(frame)
            if self.status != self.woke_to:
                await self.send(text_data=text)
            self.woke_to = None
            self.wake_at(moments)

    async def woken(self) -> bool:
        """At the race's start or time limit: the race, once its status shows it (running;
        finished, which this socket's timer stores when overdue, as the job would)."""
        text, status, _ = await self.db(self._settled)
        if status == self.status:
            return False
        self.status = self.woke_to = status
        await self.send(text_data=text)
        return True

    async def resync(self) -> None:
        text, self.status, moments = await self.db(self._race)
        await self.send(text_data=text)
        self.wake_at(moments)

    async def game_moved(self, message: dict[str, Any]) -> None:
        """Group event: a player's game moved on; its progress (counts only, never a card)."""
        frame = events.progress_frame(message)
        if self.ready and frame is not None:
            await self.send(text_data=dumps(frame))

    async def race_rematch(self, message: dict[str, Any]) -> None:
        """Group event: the race's players are offered a rematch."""
        if self.ready:
            await self.send(text_data=dumps(events.rematch_frame(message)))

    def _settled(self) -> tuple[str, str, list[datetime | None]]:
        """At a moment of the race's: finish it if it is overdue (a write of this socket's
        timer, not of a read), then its frame."""
        race = race_selectors.race_by_code(self.code)
        if race_selectors.race_overdue(race, clock.shared_now()):
            race_services.race_finish(race_id=race.pk)
        return self._race()

    def _race(self) -> tuple[str, str, list[datetime | None]]:
        """The race as read now: its frame's text, status and moments (``_sent``)."""
        view = shapes.race(race_selectors.race_by_code(self.code), self.scope.get("user"))
        kind = "race.finished" if view["status"] == "finished" else "race.state"
        return self._sent({"type": kind, "race": view})

    @staticmethod
    def _sent(frame: dict[str, Any]) -> tuple[str, str, list[datetime | None]]:
        """A race frame's text, its status, and the moments to wake at (its start and
        time limit, while it is not finished)."""
        race = frame["race"]
        status = race["status"]
        moments = [] if status == "finished" else [race["starts_at"], race["ends_at"]]
        return dumps(frame), status, [instant(m) for m in moments]
