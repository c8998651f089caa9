# shellcheck shell=bash
# Venv bootstrap shared by scripts/serve.sh, scripts/test.sh and .ci/run.
# Source it from the repository root: creates .venv if missing, installs the
# project with its dev extra (again only when pyproject.toml changed), and
# activates the venv.

_patience_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$_patience_root"

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

_patience_want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
_patience_have="$(cat .venv/.pyproject.sha256 2>/dev/null || true)"
if [ "$_patience_want" != "$_patience_have" ]; then
    echo "==> installing project and dev dependencies into .venv" >&2
    # Drop pip's noise about configured local index folders that do not exist here.
    python -m pip install --quiet --upgrade pip 2>&1 | { grep -v 'is neither a file nor a directory' || true; }
    [ "${PIPESTATUS[0]}" -eq 0 ] || return 1
    python -m pip install --quiet -e '.[dev]' 2>&1 | { grep -v 'is neither a file nor a directory' || true; }
    [ "${PIPESTATUS[0]}" -eq 0 ] || return 1
    echo "$_patience_want" > .venv/.pyproject.sha256
fi
unset _patience_py _patience_want _patience_have
