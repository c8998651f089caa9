"""ASGI entry point: HTTP through Django's own handler, WebSocket through Channels.

In production daphne serves only ``/ws/`` (gunicorn serves HTTP through
``patience_site.wsgi``); ``scripts/serve.sh`` serves both from this one process.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "patience_site.settings")

# Initialise Django (app registry) before importing anything that touches models.
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from daphne.ws_protocol import WebSocketProtocol  # noqa: E402

from api.routing import websocket_urlpatterns  # noqa: E402
from api.socket_faults import DatabaseGuard  # noqa: E402
from api.ws_auth import WebSocketAuthStack  # noqa: E402
from patience_site.observability import SocketSessions  # noqa: E402

# daphne refuses a frame over 1 MiB (--websocket-max-message-size), and autobahn under it
# then drops the TCP connection unless told otherwise: the client sees 1006, no reason.
# An option set on the protocol class wins over the factory's (autobahn reads the class
# first), so a socket sent too much gets the close frame 1009 that docs/api.md promises.
WebSocketProtocol.failByDrop = False

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Origin check (browsers), session cookie, then API token: see api/ws_auth.py.
        # Django's URLPattern of a consumer, which types-channels cannot see (api/routing.py).
        # Outermost: the open sockets gauge, a log line a session (patience_site/observability);
        # then a database fault in the handshake closes with 4503 (api/socket_faults.py).
        "websocket": SocketSessions(
            DatabaseGuard(WebSocketAuthStack(URLRouter(websocket_urlpatterns)))  # type: ignore[arg-type]
        ),
    }
)
