"""What the pages need to know about the variants: translated names, families, order."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from games.engine import VARIANTS, get_variant

#: Translated display names (the engine's names are English).
NAMES = {
    "bristol": _("Bristol"),
    "belvedere": _("Belvedere"),
    "picture-gallery": _("Picture Gallery"),
    "royal-parade": _("Royal Parade"),
    "picture-gallery-reversed": _("Picture Gallery, last row reversed"),
    "mod3": _("Mod3"),
}

#: One line on what sets each variant apart.
SUMMARIES = {
    "bristol": _("Eight fans, three reserves, build up to the King regardless of suit."),
    "belvedere": _("Bristol with the first Ace already on a foundation."),
    "picture-gallery": _("Two decks: fill the gallery with pictures in steps of three."),
    "royal-parade": _("Picture Gallery without Aces, and empty reserves stay empty."),
    "picture-gallery-reversed": _("Picture Gallery; the last row may be dealt right to left."),
    "mod3": _("Picture Gallery where any free card may fill an empty reserve at any time."),
}


#: Translated names of the variant families (races are rated per family).
FAMILIES = {
    "bristol": _("Bristol family"),
    "gallery": _("Picture Gallery family"),
}


def variant_name(key: str) -> str:
    return str(NAMES.get(key, key))


def variant_info(key: str) -> dict[str, Any]:
    v = get_variant(key)
    return {
        "key": v.key,
        "name": variant_name(v.key),
        "family": v.family.value,
        "summary": str(SUMMARIES.get(v.key, "")),
        "cards": v.card_count,
        "aces_removed": v.aces_removed,
        # The rule options the page's instant moves (web/static/web/predict.js) follow.
        "rules": {
            "refill_reserves": v.refill_reserves,
            "reserves_open_anytime": v.reserves_open_anytime,
            "reversible_last_row": v.reversible_last_row,
        },
    }


def all_variants() -> list[dict[str, Any]]:
    return [variant_info(key) for key in VARIANTS]
