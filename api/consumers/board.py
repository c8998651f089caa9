"""A day's board's socket: its top on connect, then every result entered."""

from __future__ import annotations

from typing import Any

from api import events
from api.consumers.base import (
    BOARD_LIMIT,
    CLOSE_BAD_REQUEST,
    CLOSE_NOT_FOUND,
    CLOSE_NOT_READY,
    BadMessage,
    Consumer,
    bad,
    dumps,
)
from api.daily import board_top
from core.errors import DailyNotReady, InvalidInput, NotFound
from games.events import daily_group
from games.inputs import day_parse, variant_parse
from games.selectors import dailies as daily_selectors

# -- a day's board ------------------------------------------------------------------------


class DailyBoardConsumer(Consumer):
    """A day's board of a variant: its top on connect, then every result entered."""

    async def connect(self) -> None:
        self.ready = False
        kwargs = self.scope["url_route"]["kwargs"]
        await self.accept()
        try:
            self.variant = variant_parse(kwargs["variant"])
            self.day = day_parse(kwargs["day"])
            self.limit = self._limit()
        except NotFound as exc:
            await self.close(code=CLOSE_NOT_FOUND, reason=str(exc)[:100])
            return
        except InvalidInput as exc:
            await self.close(code=CLOSE_BAD_REQUEST, reason=str(exc)[:100])
            return
        # Join before reading, so no result between the read and the join is missed.
        await self.join(daily_group(self.variant, self.day))
        try:
            text = await self.db(self._board)
        except NotFound as exc:
            await self.close(code=CLOSE_NOT_FOUND, reason=str(exc)[:100])
            return
        except DailyNotReady as exc:
            await self.close(code=CLOSE_NOT_READY, reason=str(exc)[:100])
            return
        self.ready = True
        self.watch()
        await self.send(text_data=text)

    def _limit(self) -> int:
        query = self.scope.get("query_string", b"").decode("latin1")
        for part in query.split("&"):
            name, _, value = part.partition("=")
            if name == "limit":
                # ASCII digits ("²".isdigit() is true), few of them (int() refuses 4300).
                ok = value.isascii() and value.isdigit() and len(value) <= 3
                if not ok or not 1 <= int(value) <= 100:
                    raise InvalidInput("limit must be a whole number from 1 to 100")
                return int(value)
        return BOARD_LIMIT

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if not self.ready or await self.flooded():
            return
        try:
            data = self.read_frame(text_data)
            if data.get("type") != "resync":
                raise BadMessage("'type' must be resync")
        except BadMessage as exc:
            await self.send(text_data=dumps({"type": "error", **bad(str(exc))}))
            return
        await self.resync()

    async def resync(self) -> None:
        await self.send(text_data=await self.db(self._board))

    async def refuse(self, body: dict[str, Any]) -> None:
        await self.send(text_data=dumps({"type": "error", **body}))

    async def board_result(self, message: dict[str, Any]) -> None:
        """Group event: a result entered the board (sent after its commit); its frame alone
        (the message's other keys, as the request id that caused it, are the servers')."""
        if self.ready:
            await self.send(text_data=dumps(events.board_frame(message)))

    def _board(self) -> str:
        deal = daily_selectors.published_deal(self.variant, self.day)
        user = self.scope.get("user")
        board = board_top(deal=deal, user=user, limit=self.limit)
        return dumps({"type": "board", "variant": self.variant, "date": self.day, "board": board})
