"""Settings of the floor servers (``bench/floor.py``): the product's, with the floor's
routes and no middleware, so a request meets nothing the floor does not need.

The database's settings are the product's, taken from the same environment: pooled
connections and psycopg's prepared statements (``PG_PREPARE_THRESHOLD``, default 5;
``off`` for client-side binding), so the floor's statement is prepared as the product's is.
"""

from patience_site.settings import *  # noqa: F403

ROOT_URLCONF = "bench.floor_app"
MIDDLEWARE = []
