"""Settings of ``bench/token_lookup.py``'s gunicorn servers: the product's, with the
process cache of tokens on or off by ``TOKEN_PROCESS_CACHE`` in the environment."""

import os

from patience_site.settings import *  # noqa: F403

TOKEN_PROCESS_CACHE = os.environ.get("TOKEN_PROCESS_CACHE", "1") != "0"
