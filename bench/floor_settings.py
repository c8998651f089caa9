"""Settings of the floor servers (``bench/floor.py``): the product's, with the floor's
routes and no middleware, so a request meets nothing the floor does not need."""

from patience_site.settings import *  # noqa: F403

ROOT_URLCONF = "bench.floor_app"
MIDDLEWARE = []
