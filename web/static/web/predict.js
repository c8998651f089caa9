// Instant moves: the page plays a legal card move on its own copy of the position at
// once, draws it, and sends it; the server stays the only judge, and its answer replaces
// the guess. The rules here are those of shared/spec/rules-and-notation.md for what the
// page can see; the variant's rule options come from the server's variant data. Only a
// move whose outcome the page can know is guessed: not a deal, not a move that refills
// a reserve from the hidden stock, not an undo or a resignation.
import { foundationFor } from "./cards.js";
import { variantNames } from "./common.js";

const RANKS = "A23456789TJQK";
const rank = (code) => RANKS.indexOf(code[0]) + 1;
const top = (pile) => (pile && pile.length ? pile[pile.length - 1] : null);
const ids = (prefix, n) => Array.from({ length: n }, (_, i) => prefix + (i + 1));

const FANS = ids("t", 8);
const BRISTOL_RESERVES = ids("r", 3);
const FOUNDATIONS = ids("f", 4);
const SLOTS = ids("g", 24);
const GALLERY_RESERVES = ids("r", 8);
// The start rank of each slot's row (2-5-8-J, 3-6-9-Q, 4-7-10-K); a slot holds four.
const rowStart = (slot) => 2 + Math.floor((Number(slot.slice(1)) - 1) / 8);
const SLOT_SIZE = 4;
const LAST_ROW = 8;

function bristolMoves(piles, stock) {
  const out = [];
  const needs = new Set(FOUNDATIONS.map((f) => (top(piles[f]) ? rank(top(piles[f])) + 1 : 1)));
  for (const src of [...FANS, ...BRISTOL_RESERVES]) {
    const card = top(piles[src]);
    if (!card) continue;
    for (const fan of FANS) {
      if (fan !== src && top(piles[fan]) && rank(top(piles[fan])) === rank(card) + 1) out.push(`${src}-${fan}`);
    }
    if (needs.has(rank(card))) out.push(`${src}-f`);
  }
  if (stock) out.push("deal");
  return out;
}

// The card a built slot takes next: the same suit, three ranks higher.
const next = (card) => RANKS[rank(card) + 2] + card[1];
const built = (slot, pile) => pile.length > 0 && rank(pile[0]) === rowStart(slot);

function galleryMoves(piles, stock, rules) {
  const out = [];
  const open = rules.reserves_open_anytime || !stock;
  const emptyReserves = open ? GALLERY_RESERVES.filter((r) => !(piles[r] || []).length) : [];
  for (const src of [...SLOTS, ...GALLERY_RESERVES]) {
    const card = top(piles[src]);
    if (!card) continue;
    if (card[0] === "A") {
      out.push(`${src}-a`);
      continue;
    }
    for (const slot of SLOTS) {
      const pile = piles[slot] || [];
      const fits = pile.length
        ? rank(card) > 4 && built(slot, pile) && pile.length < SLOT_SIZE && next(top(pile)) === card
        : rank(card) === rowStart(slot);
      if (fits) out.push(`${src}-${slot}`);
    }
    for (const r of emptyReserves) if (r !== src) out.push(`${src}-${r}`);
  }
  if (stock) {
    out.push("deal");
    if (rules.reversible_last_row && stock <= LAST_ROW) out.push("deal-reverse");
  }
  return out;
}

function score(family, piles) {
  if (family === "bristol") return FOUNDATIONS.reduce((n, f) => n + (piles[f] || []).length, 0);
  return SLOTS.reduce((n, g) => n + (built(g, piles[g] || []) ? piles[g].length : 0), (piles.a || []).length);
}

// The guesser of one variant: `after(state, move)` is the state the move leads to, as far
// as the page can know it, or null when only the server can say (or the move is not legal).
export function predictor(variantKey) {
  const variant = variantNames()[variantKey];
  if (!variant || !variant.rules) return { after: () => null, moves: () => null };
  const { family, rules } = variant;
  const moves = (piles, stock) =>
    family === "bristol" ? bristolMoves(piles, stock) : galleryMoves(piles, stock, rules);
  function after(state, move) {
    if (state.status !== "playing" || !state.position || !state.legal_moves.includes(move)) return null;
    if (move.startsWith("deal")) return null;
    const [src, dst] = move.split("-");
    const piles = { ...state.position.piles };
    const stock = state.position.stock;
    const card = top(piles[src]);
    const to = dst === "f" ? foundationFor(card, piles) : dst;
    if (!card || !to) return null;
    piles[src] = piles[src].slice(0, -1);
    piles[to] = [...(piles[to] || []), card];
    if (family !== "bristol" && src[0] === "r" && !piles[src].length && rules.refill_reserves && stock) {
      return null; // the stock's top card refills the reserve: the page does not know it
    }
    return {
      ...state,
      ply: state.ply + 1,
      moves_on_board: state.moves_on_board + 1,
      score: score(family, piles),
      position: { ...state.position, piles },
      legal_moves: moves(piles, stock),
      safe_moves: [], // the server's to say: nothing is played for the player on a guess
      finish: [],
      can_undo: false,
      guessed: true,
    };
  }
  return { after, moves };
}
