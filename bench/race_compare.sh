#!/usr/bin/env bash
# Races of two commits side by side: bench/race_compare.sh OLD NEW [options of bench/race.py]
#
# Checks OLD and NEW out into separate folders under /tmp (git worktree add --detach,
# sharing this tree's virtual environment), puts this tree's bench/race.py (the client)
# into both, then runs it on each commit's servers in turn, --rounds R times (1), and
# prints one table: moves, delay p50/p99, round trip p50, CPU per move by part, errors.
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: bench/race_compare.sh OLD NEW [--rounds R] [options of bench/race.py]" >&2
    exit 2
fi
old=$1 new=$2
shift 2
rounds=1
if [[ ${1:-} == --rounds ]]; then
    rounds=$2
    shift 2
fi
. "$(dirname "${BASH_SOURCE[0]}")/_two_trees.sh"
two_trees "$old" "$new" patience-race-compare
for side in old new; do
    cp "$root/bench/race.py" "$work/$side/bench/race.py" # one client for both
done

for round in $(seq "$rounds"); do
    for side in old new; do
        echo "round $round: $side"
        (cd "$work/$side" && "$python" bench/race.py --json "$work/$side-$round.json" "$@") \
            | sed 's/^/    /' || true # a run with errors exits 1: its figures still count
    done
done

"$python" - "$work" "$rounds" <<'EOF'
import json, sys
from pathlib import Path

work, rounds = Path(sys.argv[1]), int(sys.argv[2])
print()
print("| commit | round | moves | delay p50 / p99 | round trip p50 | CPU/move: server | postgres "
      "| redis | client | errors |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for side in ("old", "new"):
    for r in range(1, rounds + 1):
        path = work / f"{side}-{r}.json"
        if not path.exists():
            print(f"| {side} | {r} | (no figures) | | | | | | | |")
            continue
        f = json.loads(path.read_text())
        cpu = f["cpu_ms_per_move"]
        print(
            f"| {side} | {r} | {f['moves']} | {f['delay_p50_ms']:,.0f} / {f['delay_p99_ms']:,.0f} ms "
            f"| {f['round_trip_p50_ms']:,.1f} ms | {cpu['server']:.1f} ms | {cpu['postgres']:.1f} ms "
            f"| {cpu['redis']:.1f} ms | {cpu['client']:.1f} ms | {f['errors']} |"
        )
EOF
