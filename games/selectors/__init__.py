"""Reads: the selectors; writes are ``games.services``."""
