"""Django project package for the patience service."""
