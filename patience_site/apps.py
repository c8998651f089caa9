"""App configuration of the project itself: the admin runs as ``PatienceAdminSite``."""

from django.contrib.admin.apps import AdminConfig


class PatienceAdminConfig(AdminConfig):
    """``django.contrib.admin`` with this project's admin site as the default site."""

    default_site = "patience_site.admin.PatienceAdminSite"
