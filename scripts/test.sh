#!/usr/bin/env bash
# Set up (first run) and run the test suite; extra args go to pytest.
#   bash scripts/test.sh          every test (unit, api, fuzz, browser, multiprocess); without
#                                 DATABASE_URL the multi-process servers share a SQLite file,
#                                 and the few tests that need PostgreSQL say how to run them
#   bash scripts/test.sh fast     the unit and API tests only, in two xdist workers
#                                 (TEST_WORKERS to change; 0 for one process)
set -euo pipefail
# shellcheck source=scripts/_venv.sh
. "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"

if [ "${1:-}" = "fast" ]; then
    shift
    exec python -m pytest -m "unit or api" -n "${TEST_WORKERS:-2}" --dist loadfile "$@"
fi
exec python -m pytest "$@"
