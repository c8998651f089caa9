"""Patience games: persistence and services around the pure rules engine."""
