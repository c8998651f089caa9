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
root=$(git rev-parse --show-toplevel)
python="$root/.venv/bin/python"
work=$(mktemp -d /tmp/patience-compare.XXXXXX)

cleanup() {
    git -C "$root" worktree remove --force "$work/old" 2>/dev/null || true
    git -C "$root" worktree remove --force "$work/new" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

git -C "$root" worktree add --quiet --detach "$work/old" "$old"
git -C "$root" worktree add --quiet --detach "$work/new" "$new"
ln -s "$root/.venv" "$work/old/.venv"
ln -s "$root/.venv" "$work/new/.venv"

echo "old $(git -C "$work/old" log -1 --format='%h %s')"
echo "new $(git -C "$work/new" log -1 --format='%h %s')"
"$python" "$root/bench/compare.py" --old "$work/old" --new "$work/new" \
    --old-label "old-$(git -C "$work/old" rev-parse --short HEAD)" \
    --new-label "new-$(git -C "$work/new" rev-parse --short HEAD)" "$@"
