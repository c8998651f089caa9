"""Writes: the services (HackSoft style, ``<entity>_<action>``); reads are ``games.selectors``."""
