# shellcheck shell=bash
# Venv bootstrap shared by scripts/serve.sh, scripts/test.sh and .ci/run.
# Source it from the repository root with PATIENCE_DEPS=serve (the runtime set) or
# test (the default: the runtime set and the dev tools). It creates .venv if missing,
# installs the pinned set from requirements/<set>.txt (hashes checked; again only when
# the lock file changed) and the project itself, and activates the venv. A venv with
# the test set serves too.

_patience_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$_patience_root"
_patience_set="${PATIENCE_DEPS:-test}"

if [ ! -x .venv/bin/python ]; then
    if command -v python3.11 >/dev/null 2>&1; then
        _patience_py=python3.11
    else
        _patience_py=python3
    fi
    echo "==> creating .venv with $_patience_py" >&2
    "$_patience_py" -m venv .venv
fi

# shellcheck disable=SC1091
. .venv/bin/activate

_patience_stamp() { sha256sum "requirements/$1.txt" pyproject.toml | sha256sum | cut -d' ' -f1; }
if [ "$(cat .venv/.deps-test 2>/dev/null)" != "$(_patience_stamp test)" ] \
    && [ "$(cat ".venv/.deps-$_patience_set" 2>/dev/null)" != "$(_patience_stamp "$_patience_set")" ]; then
    _patience_count="$(grep -c '^[A-Za-z0-9]' "requirements/$_patience_set.txt")"
    echo "==> installing the $_patience_set set: $_patience_count pinned packages" \
        "(requirements/$_patience_set.txt; a first install takes a minute or two)" >&2
    # Drop pip's noise about configured local index folders that do not exist here.
    python -m pip install --quiet --upgrade pip 2>&1 | { grep -v 'is neither a file nor a directory' || true; }
    [ "${PIPESTATUS[0]}" -eq 0 ] || return 1
    python -m pip install --progress-bar off --require-hashes -r "requirements/$_patience_set.txt" 2>&1 \
        | { grep -E '^(Collecting|Successfully|ERROR)' || true; }
    [ "${PIPESTATUS[0]}" -eq 0 ] || return 1
    echo "==> installing the project" >&2
    if ! python -m pip install --quiet --no-deps -e . >.venv/install.log 2>&1; then
        cat .venv/install.log >&2
        return 1
    fi
    _patience_stamp "$_patience_set" > ".venv/.deps-$_patience_set"
fi
unset _patience_py _patience_set _patience_count
unset -f _patience_stamp
