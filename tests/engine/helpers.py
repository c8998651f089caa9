"""Helpers for the engine tests: crafted deals and positions, and a reference rules oracle.

The oracle (:func:`oracle_moves`, :func:`oracle_apply`) is a deliberately naive,
independent reading of ``shared/spec/rules-and-notation.md`` that works on the JSON
form (card codes) only, so the engine's integer tricks are checked against plain text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from games.engine import VARIANTS, Family, Position, get_variant
from games.engine.cards import cards_text

REPO_ROOT = Path(__file__).resolve().parents[2]
RANKS = "A23456789TJQK"
ALL_VARIANTS = tuple(VARIANTS)
BRISTOL_FAMILY = tuple(key for key, v in VARIANTS.items() if v.family is Family.BRISTOL)
GALLERY_FAMILY = tuple(key for key, v in VARIANTS.items() if v.family is Family.GALLERY)


def rank(code: str) -> int:
    return RANKS.index(code[0]) + 1


def canonical_deck(variant: str) -> list[str]:
    """The variant's full card set as codes (canonical order)."""
    return cards_text(get_variant(variant).deck())


def remaining(variant: str, used: Iterable[str]) -> list[str]:
    """The variant's cards minus ``used`` (a multiset), in canonical order."""
    left = Counter(canonical_deck(variant))
    left.subtract(Counter(used))
    bad = [c for c, n in left.items() if n < 0]
    assert not bad, f"more copies than the {variant} deck holds: {bad}"
    out = []
    for c in canonical_deck(variant):
        if left[c] > 0:
            left[c] -= 1
            out.append(c)
    return out


def deck_with(variant: str, placed: Mapping[int, str], *, fill: Iterable[str] = ()) -> list[str]:
    """A deck order with card ``placed[k]`` at 1-based deal position ``k``.

    Free positions take the cards of ``fill`` first (in order), then the rest of
    the deck in canonical order. ``fill`` cards must not repeat placed ones beyond
    the deck's copies.
    """
    fill = list(fill)
    size = get_variant(variant).card_count
    assert all(1 <= k <= size for k in placed), placed
    rest = remaining(variant, [*placed.values(), *fill])
    free = iter([*fill, *rest])
    deck = [placed[k] if k in placed else next(free) for k in range(1, size + 1)]
    assert Counter(deck) == Counter(canonical_deck(variant))
    return deck


def deal(variant: str, placed: Mapping[int, str], *, fill: Iterable[str] = ()) -> Position:
    """The starting position dealt from :func:`deck_with`."""
    return Position.from_deck(variant, deck_with(variant, placed, fill=fill))


def pile_ids(variant: str) -> tuple[str, ...]:
    return Position.class_for(variant).PILE_IDS


def position_json(
    variant: str,
    piles: Mapping[str, list[str]],
    *,
    dump: str,
    ply: int = 0,
) -> dict[str, Any]:
    """Full JSON of a crafted position.

    ``piles`` gives some piles bottom to top; every other pile is empty, and the
    cards not mentioned go to the bottom of pile ``dump`` (in canonical order), so
    the cards listed for ``dump`` stay on top.
    """
    ids = pile_ids(variant)
    assert set(piles) <= set(ids), set(piles) - set(ids)
    used = [c for p in piles.values() for c in p]
    out = {pid: list(piles.get(pid, [])) for pid in ids}
    out[dump] = remaining(variant, used) + out[dump]
    return {"variant": variant, "ply": ply, "piles": out}


def crafted(variant: str, piles: Mapping[str, list[str]], *, dump: str, ply: int = 0) -> Position:
    """A position read back through :meth:`Position.from_json` (so it is validated)."""
    return Position.from_json(position_json(variant, piles, dump=dump, ply=ply))


def moves_text(pos: Position) -> list[str]:
    return [str(m) for m in pos.legal_moves]


# -- reference oracle ---------------------------------------------------------------------


def _gallery_start(slot: str) -> int:
    return 2 + (int(slot[1:]) - 1) // 8


def _oracle_won(variant: str, piles: Mapping[str, list[str]]) -> bool:
    if variant in BRISTOL_FAMILY:
        return sum(len(piles[f"f{i}"]) for i in range(1, 5)) == 52
    aces = 0 if variant == "royal-parade" else 8
    slots_done = all(
        len(piles[f"g{i}"]) == 4 and rank(piles[f"g{i}"][0]) == _gallery_start(f"g{i}")
        for i in range(1, 25)
    )
    return slots_done and len(piles["a"]) == aces


def oracle_moves(data: Mapping[str, Any]) -> set[str]:
    """The legal moves of a position (its full JSON), straight from the spec's wording."""
    variant = data["variant"]
    piles = data["piles"]
    if _oracle_won(variant, piles):
        return set()
    stock = len(piles["s"])
    if variant in BRISTOL_FAMILY:
        out = _oracle_bristol_moves(piles)
    else:
        out = _oracle_gallery_moves(piles, open_reserves=variant == "mod3" or stock == 0)
    if stock:
        out.add("deal")
        if variant == "picture-gallery-reversed" and stock <= 8:
            out.add("deal-reverse")
    return out


def _oracle_bristol_moves(piles: Mapping[str, list[str]]) -> set[str]:
    """The card moves of a Bristol-family position: onto a fan one rank higher, or home."""
    out: set[str] = set()
    fans = [f"t{i}" for i in range(1, 9)]
    for src in fans + ["r1", "r2", "r3"]:
        if not piles[src]:
            continue
        r = rank(piles[src][-1])
        for dst in fans:
            if dst != src and piles[dst] and rank(piles[dst][-1]) == r + 1:
                out.add(f"{src}-{dst}")
        for f in ("f1", "f2", "f3", "f4"):
            if (rank(piles[f][-1]) if piles[f] else 0) == r - 1:
                out.add(f"{src}-f")
    return out


def _oracle_gallery_moves(piles: Mapping[str, list[str]], *, open_reserves: bool) -> set[str]:
    """The card moves of a Gallery-family position: Aces home, slots, open reserves."""
    out: set[str] = set()
    slots = [f"g{i}" for i in range(1, 25)]
    reserves = [f"r{i}" for i in range(1, 9)]
    for src in slots + reserves:
        if not piles[src]:
            continue
        card = piles[src][-1]
        if rank(card) == 1:
            out.add(f"{src}-a")
            continue
        out |= {
            f"{src}-{dst}" for dst in slots if dst != src and _oracle_fits(card, piles[dst], dst)
        }
        if open_reserves:
            out |= {f"{src}-{dst}" for dst in reserves if dst != src and not piles[dst]}
    return out


def _oracle_fits(card: str, pile: list[str], slot: str) -> bool:
    """Whether ``card`` goes on a Gallery slot: its row's start card on an empty one, else
    the same suit three ranks higher on a row built from its start card."""
    start = _gallery_start(slot)
    if not pile:
        return rank(card) == start
    return (
        rank(pile[0]) == start
        and len(pile) < 4
        and pile[-1][1] == card[1]
        and rank(pile[-1]) + 3 == rank(card)
    )


def oracle_apply(data: Mapping[str, Any], move: str) -> dict[str, Any]:
    """The full JSON after a legal move, straight from the spec's wording."""
    variant = data["variant"]
    piles = {pid: list(p) for pid, p in data["piles"].items()}
    stock = piles["s"]
    if move in ("deal", "deal-reverse"):
        if variant in BRISTOL_FAMILY:
            targets = ["r1", "r2", "r3"]
        else:
            targets = [f"r{i}" for i in range(1, 9)]
            if move == "deal-reverse":
                targets.reverse()
        for dst in targets:
            if not stock:
                break
            piles[dst].append(stock.pop())
    else:
        src, dst = move.split("-")
        card = piles[src].pop()
        if dst == "f":
            for f in ("f1", "f2", "f3", "f4"):
                if (rank(piles[f][-1]) if piles[f] else 0) == rank(card) - 1:
                    dst = f
                    break
        piles[dst].append(card)
        refill = variant in ("picture-gallery", "picture-gallery-reversed")
        if refill and src.startswith("r") and not piles[src] and stock:
            piles[src].append(stock.pop())
    return {"variant": variant, "ply": data["ply"] + 1, "piles": piles}


def oracle_score(data: Mapping[str, Any]) -> int:
    piles = data["piles"]
    if data["variant"] in BRISTOL_FAMILY:
        return sum(len(piles[f"f{i}"]) for i in range(1, 5))
    total = len(piles["a"])
    for i in range(1, 25):
        p = piles[f"g{i}"]
        if p and rank(p[0]) == _gallery_start(f"g{i}"):
            total += len(p)
    return total


#: A greedy player's first 53 moves of Royal Parade seed 20261204: lost, 32 cards left in
#: the stock.
RP_MIDGAME_TEXT = (
    "g13-g3 g21-g3 r7-g21 r5-g13 g12-g13 g17-g13 r2-g12 g11-g17 g12-g11 g4-g17 g18-g4 "
    "g21-g18 g14-g21 g11-g14 g10-g21 g14-g10 g10-g12 g12-g10 g10-g14 g14-g11 g11-g10 "
    "g10-g12 g12-g10 deal r1-g21 r3-g6 r7-g17 g9-g17 g10-g9 g9-g12 deal r4-g21 g12-g14 "
    "r7-g18 r5-g18 g22-g18 r8-g22 deal r5-g11 g15-g11 r4-g11 g14-g15 g15-g10 g24-g11 "
    "g5-g24 r2-g5 g23-g5 r7-g23 g10-g9 deal r7-g10 r5-g22 r2-g24"
)
