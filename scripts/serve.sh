#!/usr/bin/env bash
# Set up (first run) and serve the patience service at http://${HOST}:${PORT}.
set -euo pipefail
PATIENCE_DEPS=serve  # the runtime set only: no test or lint tools to serve
# shellcheck source=scripts/_venv.sh
. "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"

python manage.py migrate --noinput
python manage.py collectstatic --noinput
# Deal (and certify) today's and tomorrow's dailies: requests never do.
python manage.py create_dailies --days 2
# The races' job (fills the race-deal pool, starts and ends races on time, as compose's
# `races` service does), niced, under a lifeline to this shell's PID, which daphne takes
# over below: it ends with the server.
python -m core.lifeline $$ manage.py races --loop 1 &
exec daphne -b "${HOST:-127.0.0.1}" -p "${PORT:-8000}" patience_site.asgi:application
