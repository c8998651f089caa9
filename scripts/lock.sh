#!/usr/bin/env bash
# Pin every dependency with its hashes, after a change to pyproject.toml's dependencies:
#   requirements/test.txt   the runtime set and the dev extra (tests, CI)
#   requirements/serve.txt  the runtime set alone (serve.sh, the Docker image), at the
#                           versions of test.txt, so tests run what is served.
# Needs uv (in the dev set).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
compile() { uv pip compile pyproject.toml --generate-hashes --python-version 3.11 --quiet "$@"; }
compile --extra dev -o requirements/test.txt
compile --constraint requirements/test.txt -o requirements/serve.txt
