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
#: (and the card, and the least in px): a card painted later (a fan's next card, a
#: neighbour pile) may cover it.
INDEX_SHOWN = """() => {
  const cards = [...document.querySelectorAll('#board .card[data-card]')];
  const boxes = cards.map((c) => c.getBoundingClientRect());
  let least = 1;
  let px = Infinity;
  let worst = null;
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
  });
  return {width: boxes[0].width, least, worst, px, index: cards[0].querySelector('.card-index')
    .getBoundingClientRect().height};
}"""
