"""WebSocket URL routes (filled in later)."""

websocket_urlpatterns: list = []
