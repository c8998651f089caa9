"""URL routes of the versioned API (mounted at /api/v1/)."""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from api import accounts, analysis, daily, games, health, index, races
from api.asyncapi import AsyncApiView
from api.errors import NotFoundView

urlpatterns = [
    path("", index.IndexView.as_view(), name="index"),
    path("health/", health.HealthView.as_view(), name="health"),
    path("health/live/", health.LiveView.as_view(), name="health-live"),
    path("health/ready/", health.ReadyView.as_view(), name="health-ready"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path(
        "redoc/",
        SpectacularRedocView.as_view(url_name="schema", template_name="api/redoc.html"),
        name="redoc",
    ),
    path("asyncapi/", AsyncApiView.as_view(), name="asyncapi"),
    path("auth/csrf/", accounts.CsrfView.as_view(), name="csrf"),
    path("auth/register/", accounts.RegisterView.as_view(), name="register"),
    path("auth/login/", accounts.LoginView.as_view(), name="login"),
    path("auth/guest/", accounts.GuestView.as_view(), name="guest"),
    path("auth/token/", accounts.TokenLoginView.as_view(), name="token-login"),
    path("auth/logout/", accounts.LogoutView.as_view(), name="logout"),
    path("auth/me/", accounts.MeView.as_view(), name="me"),
    path("auth/tokens/", accounts.TokenListView.as_view(), name="tokens"),
    path("auth/tokens/<int:token_id>/", accounts.TokenDetailView.as_view(), name="token-detail"),
    path("variants/", games.VariantListView.as_view(), name="variants"),
    path("games/", games.GameListView.as_view(), name="games"),
    path("games/<int:game_id>/", games.GameDetailView.as_view(), name="game-detail"),
    path("games/<int:game_id>/moves/", games.GameMovesView.as_view(), name="game-moves"),
    path("games/<int:game_id>/undo/", games.GameUndoView.as_view(), name="game-undo"),
    path("games/<int:game_id>/hint/", games.GameHintView.as_view(), name="game-hint"),
    path("games/<int:game_id>/resign/", games.GameResignView.as_view(), name="game-resign"),
    path(
        "games/<int:game_id>/analysis/",
        analysis.GameAnalysisView.as_view(),
        name="game-analysis",
    ),
    path("daily/", daily.DailyTodayView.as_view(), name="daily-today"),
    path("daily/<str:variant>/<str:day>/", daily.DailyDetailView.as_view(), name="daily-detail"),
    path("daily/<str:variant>/<str:day>/play/", daily.DailyPlayView.as_view(), name="daily-play"),
    path(
        "daily/<str:variant>/<str:day>/board/", daily.DailyBoardView.as_view(), name="daily-board"
    ),
    path(
        "daily/<str:variant>/<str:day>/analysis/",
        analysis.DayAnalysisView.as_view(),
        name="daily-analysis",
    ),
    path(
        "daily/<str:variant>/<str:day>/results/<int:result_id>/replay/",
        daily.DailyReplayView.as_view(),
        name="daily-replay",
    ),
    path("leaderboards/<str:variant>/", daily.AlltimeBoardView.as_view(), name="alltime"),
    path("players/<str:username>/stats/", daily.PlayerRecordView.as_view(), name="player-stats"),
    path("races/", races.RaceListView.as_view(), name="races"),
    path("races/quick/", races.RaceQuickView.as_view(), name="race-quick"),
    path(
        "races/leaderboards/<str:family>/",
        races.RaceLeaderboardView.as_view(),
        name="race-leaderboard",
    ),
    path("races/<str:code>/", races.RaceDetailView.as_view(), name="race-detail"),
    path("races/<str:code>/join/", races.RaceJoinView.as_view(), name="race-join"),
    path("races/<str:code>/leave/", races.RaceLeaveView.as_view(), name="race-leave"),
    path("races/<str:code>/start/", races.RaceStartView.as_view(), name="race-start"),
    path("races/<str:code>/rematch/", races.RaceRematchView.as_view(), name="race-rematch"),
    path(
        "races/<str:code>/players/<str:username>/replay/",
        races.RaceReplayView.as_view(),
        name="race-replay",
    ),
    re_path(r"^.*$", NotFoundView.as_view()),
]
