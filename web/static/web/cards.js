// Card artwork (SVG drawn here, no images) and the names of cards and piles.
/* global gettext, pgettext, interpolate */

const SVG = "http://www.w3.org/2000/svg";

export const SUITS = {
  C: { symbol: "\u2663", red: false },
  D: { symbol: "\u2666", red: true },
  H: { symbol: "\u2665", red: true },
  S: { symbol: "\u2660", red: false },
};

const RANK_VALUE = { A: 1, T: 10, J: 11, Q: 12, K: 13 };

export function rankValue(code) {
  const r = code[0];
  return RANK_VALUE[r] || Number(r);
}

// The rank as printed on the card face (German cards say B, D, K for J, Q, K).
export function rankLabel(r) {
  switch (r) {
    case "A":
      return pgettext("card index", "A");
    case "T":
      return "10";
    case "J":
      return pgettext("card index", "J");
    case "Q":
      return pgettext("card index", "Q");
    case "K":
      return pgettext("card index", "K");
    default:
      return r;
  }
}

function rankName(r) {
  return {
    A: gettext("Ace"),
    2: gettext("Two"),
    3: gettext("Three"),
    4: gettext("Four"),
    5: gettext("Five"),
    6: gettext("Six"),
    7: gettext("Seven"),
    8: gettext("Eight"),
    9: gettext("Nine"),
    T: gettext("Ten"),
    J: gettext("Jack"),
    Q: gettext("Queen"),
    K: gettext("King"),
  }[r];
}

function suitName(s) {
  return { C: gettext("Clubs"), D: gettext("Diamonds"), H: gettext("Hearts"), S: gettext("Spades") }[
    s
  ];
}

// "Ten of Hearts" (German: "Herz Zehn").
export function cardName(code) {
  return interpolate(
    gettext("%(rank)s of %(suit)s"),
    { rank: rankName(code[0]), suit: suitName(code[1]) },
    true,
  );
}

// Short text form with the suit symbol: "10♥".
export function cardShort(code) {
  return rankLabel(code[0]) + SUITS[code[1]].symbol;
}

const GALLERY_ROWS = [gettext("top row"), gettext("middle row"), gettext("bottom row")];

// The name of a pile, e.g. "fan 3", "reserve 2", "top row, place 5", "ace pile".
export function pileName(id) {
  const n = Number(id.slice(1));
  switch (id[0]) {
    case "t":
      return interpolate(gettext("fan %(n)s"), { n }, true);
    case "r":
      return interpolate(gettext("reserve %(n)s"), { n }, true);
    case "f":
      return id === "f"
        ? gettext("the foundations")
        : interpolate(gettext("foundation %(n)s"), { n }, true);
    case "g": {
      const row = GALLERY_ROWS[Math.floor((n - 1) / 8)];
      return interpolate(gettext("%(row)s, place %(n)s"), { row, n: ((n - 1) % 8) + 1 }, true);
    }
    case "a":
      return gettext("the ace pile");
    case "s":
      return gettext("the stock");
    default:
      return id;
  }
}

// Where a card going to "f" lands, as the engine puts it: the leftmost foundation whose
// top is one rank lower, of any suit (an Ace: the first empty one).
export function foundationFor(card, piles) {
  const need = rankValue(card) - 1;
  const ids = ["f1", "f2", "f3", "f4"];
  return (
    ids.find((f) => {
      const top = (piles[f] || []).slice(-1)[0];
      return (top ? rankValue(top) : 0) === need;
    }) || null
  );
}

// A move in words on the cards of the position it is played in: "Five of Spades onto
// the Six of Hearts", "Ace of Clubs to the foundations", "deal".
export function moveWords(move, piles) {
  if (move === "deal") return gettext("deal");
  if (move === "deal-reverse") return gettext("deal the last row right to left");
  if (move === "undo") return gettext("undo");
  const [src, dst] = move.split("-");
  const card = (piles[src] || []).slice(-1)[0];
  if (!card || !dst) return move;
  const target = (piles[dst] || []).slice(-1)[0];
  if (target && dst !== "a") {
    return interpolate(gettext("%(card)s onto the %(target)s"), { card: cardName(card), target: cardName(target) }, true);
  }
  if (dst === "f" || dst === "a") {
    return interpolate(gettext("%(card)s to %(pile)s"), { card: cardName(card), pile: pileName(dst) }, true);
  }
  return interpolate(gettext("%(card)s to the empty %(pile)s"), { card: cardName(card), pile: pileName(dst) }, true);
}

// Pip positions (x, y) on the 100 x 140 card for the number cards.
const L = 28;
const M = 50;
const R = 72;
const PIPS = {
  2: [
    [M, 56],
    [M, 122],
  ],
  3: [
    [M, 56],
    [M, 88],
    [M, 122],
  ],
  4: [
    [L, 56],
    [R, 56],
    [L, 122],
    [R, 122],
  ],
  5: [
    [L, 56],
    [R, 56],
    [M, 88],
    [L, 122],
    [R, 122],
  ],
  6: [
    [L, 56],
    [R, 56],
    [L, 88],
    [R, 88],
    [L, 122],
    [R, 122],
  ],
  7: [
    [L, 56],
    [R, 56],
    [M, 73],
    [L, 88],
    [R, 88],
    [L, 122],
    [R, 122],
  ],
  8: [
    [L, 56],
    [R, 56],
    [M, 73],
    [L, 88],
    [R, 88],
    [M, 105],
    [L, 122],
    [R, 122],
  ],
  9: [
    [L, 55],
    [R, 55],
    [L, 77],
    [R, 77],
    [M, 88],
    [L, 99],
    [R, 99],
    [L, 122],
    [R, 122],
  ],
  10: [
    [L, 55],
    [R, 55],
    [M, 67],
    [L, 77],
    [R, 77],
    [L, 99],
    [R, 99],
    [M, 111],
    [L, 122],
    [R, 122],
  ],
};

function svgEl(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

// The text of the card faces (indexes, pips, court letters) is drawn once per card in a
// hidden sprite and shown with <use>: none of it is in the page's own tree, so a card's only
// text is its accessible name ("Jack of Hearts on fan 1"), as screen readers, voice control
// and axe's label-in-name rule (WCAG 2.5.3) expect. The glyphs look the same; a <use> takes
// its font from its own class, and its box (the index's) is the text's.
let sprite = null;

function glyphs(id, className, ...texts) {
  if (!sprite) {
    sprite = svgEl("svg", { id: "card-glyphs", "aria-hidden": "true", focusable: "false", class: "card-glyphs" });
    sprite.append(svgEl("defs", {}));
    document.body.append(sprite);
  }
  if (!document.getElementById(id)) {
    const group = svgEl("g", { id });
    group.append(...texts);
    sprite.firstChild.append(group);
  }
  return svgEl("use", { href: "#" + id, class: className });
}

// One card face as an SVG element (viewBox 100 x 140). The corner index (rank and
// suit symbol) sits in the top strip, the only part visible when cards overlap.
export function cardSvg(code) {
  const rank = code[0];
  const suit = SUITS[code[1]];
  const color = suit.red ? "#c0182f" : "#1b1b1f";
  const svg = svgEl("svg", {
    viewBox: "0 0 100 140",
    class: "card-face " + (suit.red ? "red" : "black"),
    "aria-hidden": "true",
    focusable: "false",
  });
  svg.append(
    svgEl("rect", {
      x: 1.5,
      y: 1.5,
      width: 97,
      height: 137,
      rx: 9,
      class: "card-bg",
    }),
  );
  const label = rankLabel(rank);
  // Its box (the font's ascent and descent) ends 0.34 card widths from the top: a fan's
  // step of INDEX_STEP (board.js) shows it whole.
  const index = svgEl("text", { x: 7, y: 27, fill: color, "font-size": label.length > 1 ? 25 : 28 });
  index.append(svgEl("tspan", { class: "card-rank" }, label));
  index.append(svgEl("tspan", { class: "card-suit", dx: 2 }, suit.symbol));
  svg.append(glyphs("card-index-" + code, "card-index", index));
  const v = rankValue(code);
  const body = [];
  if (v === 1) {
    body.push(svgEl("text", { x: 50, y: 106, "text-anchor": "middle", "font-size": 66, fill: color }, suit.symbol));
  } else if (v <= 10) {
    for (const [x, y] of PIPS[v]) {
      const upside = y > 90;
      body.push(
        svgEl(
          "text",
          {
            x,
            y: y + 8,
            "text-anchor": "middle",
            "font-size": 24,
            fill: color,
            transform: upside ? `rotate(180 ${x} ${y})` : "",
          },
          suit.symbol,
        ),
      );
    }
  } else {
    // Court card: a framed picture with a crown, the rank letter and the suit.
    svg.append(svgEl("rect", { x: 16, y: 46, width: 68, height: 84, rx: 5, class: "court-frame", stroke: color }));
    const points = v === 13 ? "30,66 34,50 42,60 50,46 58,60 66,50 70,66" : v === 12 ? "32,66 38,52 50,62 62,52 68,66" : "34,66 34,54 50,60 66,54 66,66";
    svg.append(svgEl("polygon", { points, class: "court-crown", fill: color }));
    body.push(svgEl("text", { x: 50, y: 104, "text-anchor": "middle", "font-size": 38, "font-weight": 700, fill: color }, label));
    body.push(svgEl("text", { x: 50, y: 125, "text-anchor": "middle", "font-size": 20, fill: color }, suit.symbol));
  }
  svg.append(glyphs("card-body-" + code, "card-body", ...body));
  return svg;
}
