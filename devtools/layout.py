"""What the layout checks share: the window sizes, a deal per variant that plays well
in the browser, and the script that measures how much of each corner index shows
(``tests/browser`` and ``bench/play_feel.py``)."""

from __future__ import annotations

#: Desktop, laptop, large screen and phone (issue 33).
SIZES = [(1280, 720), (1366, 768), (1920, 1080), (390, 844)]

#: A seed per variant whose early game has card moves of every kind.
VARIANTS = [
    ("bristol", 7),
    ("belvedere", 3),
    ("picture-gallery", 9),
    ("royal-parade", 4),
    ("picture-gallery-reversed", 5),
    ("mod3", 6),
]

#: The card width and, over every card's corner index, the least visible share of it
#: (and the card, and the least in px), the most px of one covered (``cut``: under half a
#: pixel is the font's box rounded at a small size, not ink), and the indexes shown whole
#: (``full``, of ``cards``: less than half a pixel covered). A card painted later (a fan's
#: next card, a neighbour pile) may cover an index.
#: Given a pile id, the cards of that pile only.
INDEX_SHOWN = """(pile) => {
  const within = pile ? `#board [data-pile="${pile}"]` : '#board';
  const cards = [...document.querySelectorAll(within + ' .card[data-card]')];
  const boxes = cards.map((c) => c.getBoundingClientRect());
  let least = 1;
  let px = Infinity;
  let worst = null;
  let full = 0;
  let cut = 0;
  cards.forEach((card, i) => {
    const idx = card.querySelector('.card-index').getBoundingClientRect();
    let shown = idx.height;
    for (let j = i + 1; j < cards.length; j++) {
      const b = boxes[j];
      const across = Math.min(b.right, idx.right) - Math.max(b.left, idx.left);
      if (across <= 0.5 || b.bottom <= idx.top || b.top >= idx.bottom) continue;
      shown = Math.min(shown, Math.max(0, b.top - idx.top));
    }
    if (shown / idx.height < least) {
      least = shown / idx.height;
      worst = card.getAttribute('aria-label');
    }
    px = Math.min(px, shown);
    full += idx.height - shown < 0.5;
    cut = Math.max(cut, idx.height - shown);
  });
  return {width: boxes[0].width, least, worst, px, full, cut, cards: cards.length,
    index: cards[0].querySelector('.card-index').getBoundingClientRect().height};
}"""


#: Resolves with the layout shift of the page since it started loading (CLS: the sum of
#: shifts without recent input), once it has had ``ms`` more to draw itself.
CLS = """(ms) => new Promise((resolve) => {
  let cls = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (!e.hadRecentInput) cls += e.value;
  }).observe({type: "layout-shift", buffered: true});
  setTimeout(() => resolve(cls), ms);
})"""


def long_fans(seed: int = 7) -> dict:
    """A Bristol position (the engine's full JSON) with the longest fans a game makes: a
    14-card fan (a card under King down to Ace) and a 13-card one (King down to Ace), the
    rest of the deck on the other piles and 4 cards in the stock. Both Aces can go home."""
    from games.engine import Position, new_position

    first = ["9C", "KS", "QH", "JC", "TD", "9S", "8H", "7C", "6D", "5S", "4H", "3C", "2D", "AS"]
    second = ["KH", "QC", "JD", "TS", "9H", "8C", "7D", "6S", "5H", "4C", "3D", "2S", "AH"]
    deck = [c for p in new_position("bristol", seed=seed).to_json()["piles"].values() for c in p]
    rest = [c for c in deck if c not in first + second]
    piles: dict[str, list[str]] = {"t1": first, "t2": second}
    for i in range(3, 9):
        piles[f"t{i}"], rest = rest[:3], rest[3:]
    for i in range(1, 4):
        piles[f"r{i}"], rest = rest[:1], rest[1:]
    for i in range(1, 5):
        piles[f"f{i}"] = []
    piles["s"] = rest
    data = {"variant": "bristol", "ply": 0, "piles": piles}
    return Position.from_json(data).to_json()  # checks it: the whole deck, a valid position


def near_win() -> dict:
    """A Bristol position one Finish from a win: 41 cards home, the stock empty, and 11
    cards on four fans (K Q J 10 of one suit, K Q J of another, two K Q) that go home in
    a line of 11 moves."""
    from games.engine import Position

    def run(suit: str, top: str) -> list[str]:
        ranks = "A23456789TJQK"
        return [r + suit for r in ranks[: ranks.index(top) + 1]]

    piles: dict[str, list[str]] = {f"t{i}": [] for i in range(1, 9)}
    piles.update({f"r{i}": [] for i in range(1, 4)})
    piles.update(f1=run("C", "J"), f2=run("D", "J"), f3=run("H", "T"), f4=run("S", "9"), s=[])
    piles.update(t1=["KS", "QS", "JS", "TS"], t2=["KH", "QH", "JH"], t3=["KC", "QC"])
    piles["t4"] = ["KD", "QD"]
    return Position.from_json({"variant": "bristol", "ply": 60, "piles": piles}).to_json()


#: Run in ``manage.py shell`` with a player's name and a position: a new practice game of
#: that player shows the position (its move log empty), and its id is printed. Made here,
#: not through the API, so that no server process holds the dealt position for a move.
GAME_AT = """
from django.contrib.auth import get_user_model
from games.engine import Position
from games.engine.record import position_bytes
from games.models import Game
from games.services import games as game_services
position = Position.from_json({position!r})
user = get_user_model().objects.get(username={username!r})
game = game_services.practice_game_start(user=user, variant=position.variant.key, seed=7)
Game.objects.filter(pk=game.pk).update(position=position_bytes(position), score=position.score)
print(game.pk)
"""
