from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_save, pre_delete, pre_save


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"

    def ready(self) -> None:
        # Every account, however created (registration, the admin, createsuperuser),
        # gets its name's look-alike form; the user model is Django's, so a signal.
        post_save.connect(_user_saved, sender=settings.AUTH_USER_MODEL)
        # Any change of a token or its user, however made (the admin, a script), marks
        # the token's cache entry before the write (accounts.token_cache).
        pre_save.connect(_token_changing, sender="accounts.ApiToken")
        pre_delete.connect(_token_changing, sender="accounts.ApiToken")
        # A user's delete deletes its tokens, each with its own pre_delete.
        pre_save.connect(_user_changing, sender=settings.AUTH_USER_MODEL)


def _user_saved(*, instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    if created and not raw:
        from accounts.services import username_skeleton_store

        username_skeleton_store(user=instance)


def _token_changing(*, instance: Any, **kwargs: Any) -> None:
    if instance._state.adding:
        return
    from accounts.models import ApiToken
    from accounts.token_cache import forget

    # The stored key too, should a save replace it.
    stored = ApiToken.objects.filter(pk=instance.pk).values_list("key_hash", flat=True)
    forget({instance.key_hash, *stored})


def _user_changing(
    *, instance: Any, update_fields: frozenset[str] | None = None, **kwargs: Any
) -> None:
    # A new account has no token yet; a log-in writes only ``last_login``, which no
    # token's admission depends on.
    if instance._state.adding or update_fields == frozenset({"last_login"}):
        return
    from accounts.token_cache import forget_user

    forget_user(instance.pk)
