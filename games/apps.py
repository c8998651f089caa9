from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"

    def ready(self) -> None:
        """Subscribe the services that follow a game's moves: a ranked game's end enters
        its result (and the boards), a race finishes when its last game ends; so the move
        command needs to know nothing of results' or races' services."""
        from games import events
        from games.event_types import GameMoved
        from games.services.races import race_game_moved
        from games.services.results import result_game_moved

        events.subscribe(GameMoved, result_game_moved)
        events.subscribe(GameMoved, race_game_moved)
