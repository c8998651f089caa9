"""The served schemas as JSON Schema validators: OpenAPI's components, and AsyncAPI's messages.

``json_schema`` turns an OpenAPI 3.0 schema into JSON Schema with every object closed,
so a field the schema does not name fails. ``SocketFrames`` checks what a socket sends
(a text frame, or a close code) against ``api/asyncapi.yaml``, whose payloads name the
OpenAPI schema's components.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

#: OpenAPI 3.0 keywords that are not JSON Schema's (``nullable`` is rewritten).
NOT_JSON_SCHEMA = {"nullable", "readOnly", "writeOnly", "example"}

#: Formats as the schema uses them; jsonschema checks ``date-time`` only with an extra package.
FORMATS = FormatChecker()


@FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    """ISO 8601 with a time zone, as DRF renders an aware datetime."""
    return not isinstance(value, str) or datetime.fromisoformat(value).tzinfo is not None


def json_schema(node: Any) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema, every object with properties closed."""
    if isinstance(node, list):
        return [json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: json_schema(value) for key, value in node.items() if key not in NOT_JSON_SCHEMA}
    if isinstance(node.get("properties"), dict):
        out.setdefault("additionalProperties", False)
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


#: Where the AsyncAPI document's payloads find the OpenAPI components.
OPENAPI_URI = "/api/v1/schema/?format=json"


def openapi_schema() -> dict[str, Any]:
    """The OpenAPI schema as the server serves it (generated in this process)."""
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


class SocketFrames:
    """What each socket may send, read from the AsyncAPI document."""

    def __init__(self, document: dict[str, Any], openapi: dict[str, Any]) -> None:
        self.document = document
        components = {"components": {"schemas": json_schema(openapi["components"]["schemas"])}}
        resource = Resource.from_contents(components, default_specification=DRAFT202012)
        self.registry: Registry = Registry().with_resource(OPENAPI_URI, resource)
        self.channels: list[tuple[str, re.Pattern[str]]] = [
            (name, re.compile("^" + re.sub(r"\\\{\w+\\\}", ".*", re.escape(c["address"])) + "$"))
            for name, c in document["channels"].items()
        ]

    def channel(self, path: str) -> str:
        """The first channel whose address matches ``path`` (the catch-all is last)."""
        for name, address in self.channels:
            if address.match(path):
                return name
        raise AssertionError(f"no channel of the AsyncAPI document has the address {path}")

    def sent_by_server(self, channel: str) -> dict[str, dict[str, Any]]:
        """The messages the server sends on ``channel``, by name."""
        messages = {}
        for operation in self.document["operations"].values():
            if operation["action"] == "send" and operation["channel"]["$ref"].endswith(
                f"/{channel}"
            ):
                for ref in operation["messages"]:
                    message = self.resolve(ref["$ref"])
                    messages[message["name"]] = message
        return messages

    def resolve(self, ref: str) -> dict[str, Any]:
        """An internal reference of the document (``#/a/b``), followed to the end."""
        node: Any = self.document
        for part in ref.removeprefix("#/").split("/"):
            node = node[part]
        return self.resolve(node["$ref"]) if "$ref" in node else node

    def validator(self, message: dict[str, Any]) -> Draft202012Validator:
        payload = message["payload"]
        assert payload["schemaFormat"].startswith("application/vnd.oai.openapi;version=3.0")
        schema = json_schema(payload["schema"])
        return Draft202012Validator(schema, registry=self.registry, format_checker=FORMATS)

    def check_frame(self, path: str, text: str) -> tuple[str, str]:
        """The (channel, message name) of a frame the server sent; fails if none fits."""
        channel = self.channel(path)
        frame = json.loads(text)
        messages = self.sent_by_server(channel)
        kind = frame.get("type")
        assert kind in messages, f"{channel} sends no {kind!r} message: {text[:300]}"
        errors = sorted(self.validator(messages[kind]).iter_errors(frame), key=str)
        assert not errors, f"{channel} {kind}: {errors[0].message} at {list(errors[0].path)}"
        return channel, kind

    def check_close(self, path: str, code: int) -> tuple[str, str]:
        """The (channel, close code) of a close the server sent; fails if undeclared."""
        channel = self.channel(path)
        codes = self.document["channels"][channel]["x-close-codes"]
        assert code in codes, f"{channel} closes with {code}, which it does not declare"
        return channel, str(code)


@cache
def socket_frames() -> SocketFrames:
    from api.asyncapi import asyncapi_document

    return SocketFrames(asyncapi_document(), openapi_schema())
