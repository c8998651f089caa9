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
exec daphne -b "${HOST:-127.0.0.1}" -p "${PORT:-8000}" patience_site.asgi:application
