#!/usr/bin/env bash
# Set up (first run) and run the whole test suite; extra args go to pytest.
set -euo pipefail
# shellcheck source=scripts/_venv.sh
. "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"

exec python -m pytest "$@"
