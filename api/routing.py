"""WebSocket URL routes (see ``api.consumers`` for messages and close codes)."""

from django.urls import path, re_path

from api import consumers

# Channels routes its consumers with Django's path() and re_path(), as its documentation
# does; django-stubs take only Django views there, hence the ignores.
websocket_urlpatterns = [
    path("ws/v1/games/<int:game_id>/", consumers.GameConsumer.as_asgi()),  # type: ignore[arg-type]
    path(
        "ws/v1/daily/<str:variant>/<str:day>/",
        consumers.DailyBoardConsumer.as_asgi(),  # type: ignore[arg-type]
    ),
    path("ws/v1/races/<str:code>/", consumers.RaceConsumer.as_asgi()),  # type: ignore[arg-type]
    re_path(r"^", consumers.NotFoundConsumer.as_asgi()),  # type: ignore[arg-type]
]
