"""ASGI entry point: HTTP via Django (on a fixed pool of threads), WebSocket via Channels."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "patience_site.settings")

# Initialise Django (app registry) before importing anything that touches models.
django.setup(set_prefix=False)

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from api.http import ThreadPoolASGIHandler  # noqa: E402
from api.routing import websocket_urlpatterns  # noqa: E402
from api.ws_auth import WebSocketAuthStack  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": ThreadPoolASGIHandler(),
        # Origin check (browsers), session cookie, then API token: see api/ws_auth.py.
        "websocket": WebSocketAuthStack(URLRouter(websocket_urlpatterns)),
    }
)
