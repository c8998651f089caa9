"""Routes of the web pages (mounted at the site root)."""

from django.urls import path

from web import views

app_name = "web"

urlpatterns = [
    path("", views.home, name="home"),
    path("play/<int:game_id>/", views.play, name="play"),
    path("games/", views.my_games, name="games"),
    path("rules/", views.rules_index, name="rules-index"),
    path("rules/<str:variant>/", views.rules, name="rules"),
    path("leaderboards/", views.leaderboards, name="leaderboards"),
    path("leaderboards/<str:variant>/", views.alltime, name="alltime"),
    path("leaderboards/<str:variant>/<str:day>/", views.day_board, name="day-board"),
    path(
        "leaderboards/<str:variant>/<str:day>/replay/<int:result_id>/",
        views.replay,
        name="replay",
    ),
    path("races/", views.races, name="races"),
    path("races/leaderboards/<str:family>/", views.race_board, name="race-board"),
    path("races/<str:code>/", views.race, name="race"),
    path("races/<str:code>/replay/<str:username>/", views.race_replay, name="race-replay"),
    path("players/<str:username>/", views.player, name="player"),
    path("login/", views.login_page, name="login"),
    path("register/", views.register_page, name="register"),
    path("account/tokens/", views.tokens, name="tokens"),
]
