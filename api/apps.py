from django.apps import AppConfig


class ApiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "api"

    def ready(self) -> None:
        """Give the domain's events that carry a public shape their wire forms: the shapes
        live here, at the edge (``api.events``)."""
        from api import events

        events.register()
