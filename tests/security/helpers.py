"""Helpers of the security tests."""

from __future__ import annotations

import json
from typing import Any

#: Rates no test here reaches, for tests that are not about rate limits.
HIGH_RATE = "1000000/min"


def schema_operations(schema: Any) -> list[Any]:
    """Every operation of a schemathesis schema; one it cannot read fails the tests."""
    from schemathesis.core.result import Err

    out = []
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise result.err()
        out.append(result.ok())
    return out


def raise_rates(settings: Any) -> None:
    """REST rate limits out of the way."""
    conf = dict(settings.REST_FRAMEWORK)
    conf["DEFAULT_THROTTLE_RATES"] = dict.fromkeys(conf["DEFAULT_THROTTLE_RATES"], HIGH_RATE)
    settings.REST_FRAMEWORK = conf


class Socket:
    """A WebsocketCommunicator that speaks JSON and records every text frame it receives."""

    first: dict[str, Any]  # the frame it opened with, when a fixture keeps it

    def __init__(
        self, path: str, headers: list[tuple[bytes, bytes]] | None = None, log: list | None = None
    ) -> None:
        from channels.testing import WebsocketCommunicator

        from patience_site.asgi import application

        self.comm = WebsocketCommunicator(application, path, headers=headers or [])
        self.log = log if log is not None else []

    async def open(self) -> dict[str, Any]:
        connected, _ = await self.comm.connect()
        assert connected
        return await self.recv()

    async def recv(self, timeout: float = 5) -> dict[str, Any]:
        text = await self.comm.receive_from(timeout)
        self.log.append(text)
        return json.loads(text)

    async def send_text(self, text: str) -> None:
        await self.comm.send_to(text_data=text)

    async def ask(self, message: Any) -> dict[str, Any]:
        await self.send_text(json.dumps(message))
        return await self.recv()

    async def close_code(self, timeout: float = 5) -> int:
        """The code the server closes with (after accepting)."""
        connected, _ = await self.comm.connect()
        assert connected
        out = await self.comm.receive_output(timeout)
        assert out["type"] == "websocket.close", out
        return out["code"]

    async def quiet(self, timeout: float = 0.3) -> bool:
        return await self.comm.receive_nothing(timeout)

    async def close(self) -> None:
        await self.comm.disconnect()


# -- payload checks -----------------------------------------------------------------------


def assert_envelope(body: Any) -> dict[str, Any]:
    """The error of an envelope ``{"error": {code, message, details}}``."""
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "details"}, error
    assert isinstance(error["code"], str) and error["code"], error
    assert isinstance(error["message"], str) and error["message"], error
    assert isinstance(error["details"], dict), error
    return error
