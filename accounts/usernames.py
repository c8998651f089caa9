"""What a user name looks like: names with the same skeleton are refused as look-alikes.

"аdmin" with a Cyrillic а, "ＡＤＭＩＮ" in full-width letters and "Admin" all
read as "admin". The skeleton folds case and compatibility forms (NFKC and
case folding), then replaces each character by its prototype in Unicode's
confusables table (the data of the confusable-homoglyphs library, from
``confusables.txt``): there a look-alike maps to the one character it imitates
and a prototype lists its look-alikes, so a character with a single entry
takes the smaller of itself and that entry (a pair of mutual look-alikes then
meets on one of them).
"""

from __future__ import annotations

import unicodedata

from confusable_homoglyphs.confusables import confusables_data

#: Direction marks the table puts around right-to-left characters.
_MARKS = "\u200e\u200f"


def _prototype(ch: str) -> str:
    alikes = confusables_data.get(ch, ())
    if len(alikes) != 1:
        return ch
    return min(ch, alikes[0]["c"].strip(_MARKS))


def username_skeleton(name: str) -> str:
    """The form two names share when a reader cannot tell them apart."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    mapped = "".join(_prototype(ch) for ch in folded)
    return unicodedata.normalize("NFKC", mapped).casefold()
