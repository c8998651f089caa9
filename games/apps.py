from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"

    def ready(self) -> None:
        """A race follows its games' moves (another aggregate): it finishes when its last
        game ends, so the move path needs to know nothing of races' services."""
        from games import events
        from games.services.races import race_game_moved

        events.game_moved_follow(race_game_moved)
