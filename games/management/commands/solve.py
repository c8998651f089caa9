"""``manage.py solve VARIANT --seed N``: decide one deal with the perfect-information solver."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.engine import SEED_LIMIT, VARIANTS
from games.engine.solver import solve_seed


def seed_arg(text: str) -> int:
    value = int(text)
    if not 0 <= value < SEED_LIMIT:
        raise ValueError(text)
    return value


class Command(BaseCommand):
    help = "Solve one deal (the solver sees the stock): print verdict, winning line, states, time."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("variant", choices=sorted(VARIANTS))
        parser.add_argument("--seed", type=seed_arg, required=True, help="0 <= seed < 2**64")
        parser.add_argument(
            "--limit", type=float, default=None, help="seconds before giving up (default: none)"
        )
        parser.add_argument(
            "--nodes", type=int, default=None, help="states before giving up (deterministic)"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        limit, nodes = options["limit"], options["nodes"]
        if limit is not None and limit <= 0:
            raise CommandError("--limit must be positive")
        if nodes is not None and nodes < 1:
            raise CommandError("--nodes must be at least 1")
        variant, seed = options["variant"], options["seed"]
        res = solve_seed(variant, seed, max_seconds=limit, max_nodes=nodes)
        if options["json"]:
            self.stdout.write(json.dumps({"variant": variant, "seed": seed, **res.to_json()}))
            return
        self.stdout.write(f"{variant} seed {seed}")
        self.stdout.write(f"verdict {res.verdict.value}")
        if res.line:
            self.stdout.write(f"line ({len(res.line)} moves): {' '.join(res.line)}")
        self.stdout.write(f"nodes {res.nodes}")
        self.stdout.write(f"time {res.seconds:.3f} s")
