# Sourced by bench/compare.sh and bench/race_compare.sh: two_trees OLD NEW NAME checks
# the commits OLD and NEW out into "$work/old" and "$work/new" (git worktree add
# --detach under a new /tmp/NAME.* folder, sharing this tree's virtual environment)
# and removes both when the script exits. Sets root, python and work.

two_trees() {
    root=$(git rev-parse --show-toplevel)
    python="$root/.venv/bin/python"
    work=$(mktemp -d "/tmp/$3.XXXXXX")
    trap two_trees_cleanup EXIT
    git -C "$root" worktree add --quiet --detach "$work/old" "$1"
    git -C "$root" worktree add --quiet --detach "$work/new" "$2"
    ln -s "$root/.venv" "$work/old/.venv"
    ln -s "$root/.venv" "$work/new/.venv"
    echo "old $(git -C "$work/old" log -1 --format='%h %s')"
    echo "new $(git -C "$work/new" log -1 --format='%h %s')"
}

two_trees_cleanup() {
    git -C "$root" worktree remove --force "$work/old" 2>/dev/null || true
    git -C "$root" worktree remove --force "$work/new" 2>/dev/null || true
    rm -rf "$work"
}
