"""WebSocket URL routes (see ``api.consumers`` for messages and close codes)."""

from django.urls import path, re_path

from api import consumers

websocket_urlpatterns = [
    path("ws/v1/games/<int:game_id>/", consumers.GameConsumer.as_asgi()),
    path("ws/v1/daily/<str:variant>/<str:day>/", consumers.DailyBoardConsumer.as_asgi()),
    path("ws/v1/races/<str:code>/", consumers.RaceConsumer.as_asgi()),
    re_path(r"^", consumers.NotFoundConsumer.as_asgi()),
]
