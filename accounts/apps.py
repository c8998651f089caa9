from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_save


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"

    def ready(self) -> None:
        # Every account, however created (registration, the admin, createsuperuser),
        # gets its name's look-alike form; the user model is Django's, so a signal.
        post_save.connect(_user_saved, sender=settings.AUTH_USER_MODEL)


def _user_saved(*, instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    if created and not raw:
        from accounts.services import username_skeleton_store

        username_skeleton_store(user=instance)
