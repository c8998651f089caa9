#!/usr/bin/env bash
# Compare two commits side by side: bench/compare.sh OLD NEW [options of bench/compare.py]
#
# Checks OLD and NEW out into separate folders under /tmp (git worktree add --detach,
# sharing this tree's virtual environment), then runs bench/compare.py: CPU per move
# by part and capacity over WebSocket and REST, the two commits alternating in one run.
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: bench/compare.sh OLD NEW [options of bench/compare.py]" >&2
    exit 2
fi
old=$1 new=$2
shift 2
. "$(dirname "${BASH_SOURCE[0]}")/_two_trees.sh"
two_trees "$old" "$new" patience-compare
"$python" "$root/bench/compare.py" --old "$work/old" --new "$work/new" \
    --old-label "old-$(git -C "$work/old" rev-parse --short HEAD)" \
    --new-label "new-$(git -C "$work/new" rev-parse --short HEAD)" "$@"
