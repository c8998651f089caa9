// Draws a position (piles bottom to top, stock as a count) in the layout of its family.
/* global gettext, ngettext, interpolate */
import { cardName, cardSvg, pileName, rankLabel } from "./cards.js";
import { el } from "./common.js";

const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);

export const GALLERY_STARTS = [
  ["2", "5", "8", "J"],
  ["3", "6", "9", "Q"],
  ["4", "7", "10", "K"],
];

function rowStarts(i) {
  return GALLERY_STARTS[i].map((r) => (r === "10" ? r : rankLabel(r)));
}

// The pile ids of a family in reading order.
export function pileIds(family) {
  if (family === "bristol") {
    return [
      "f1", "f2", "f3", "f4",
      "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8",
      "r1", "r2", "r3",
    ];
  }
  const ids = ["a"];
  for (let i = 1; i <= 24; i++) ids.push("g" + i);
  for (let i = 1; i <= 8; i++) ids.push("r" + i);
  return ids;
}

// A card node; kept and reused while its card stays on the board (see `Board.fill`).
function cardNode(code) {
  const node = el("div", { class: "card", role: "img", dataset: { card: code } });
  node.append(cardSvg(code));
  return node;
}

// A fanned card shows this much of itself (in card widths) above the next one: its whole
// corner index (cards.js), so a Jack never reads "I" nor a Queen "O". No fan ever steps
// less than this: a longer fan takes a taller box (`fanSpread`).
export const INDEX_STEP = 0.35;
// How far (in card widths) the top card of a spread pile may sit below its first card:
// room for ten cards at INDEX_STEP (a reserve once the stock is dealt out), and a
// gallery place's four.
const FAN_SPREAD = 9 * INDEX_STEP;
const SLOT_SPREAD = 3 * INDEX_STEP;
const FAN_STEP = 0.42;
// The steps of a fan that holds more than its box takes at FAN_STEP: the middle is
// squashed before the top cards (the ones a player reads and moves), never below
// INDEX_STEP while the box has room for that (`fanSpread` makes sure it has).
const TOP_KEPT = 2;

export function fanOffsets(n, spread, step) {
  const steps = Math.max(0, n - 1);
  const gaps = Array(steps).fill(step);
  if (steps * step > spread) {
    const top = Math.min(TOP_KEPT, steps);
    const middle = steps - top;
    const keep = middle && (spread - top * step) / middle >= INDEX_STEP ? step : Math.min(step, INDEX_STEP);
    const rest = middle ? (spread - top * keep) / middle : 0;
    for (let k = 0; k < steps; k++) gaps[k] = k < middle ? rest : middle ? keep : spread / steps;
  }
  const out = [0];
  for (const g of gaps) out.push(out[out.length - 1] + g);
  return out;
}

// The box (card widths below the first card) of the fans ("t") or the reserves ("r") of
// a board: room for ten cards, or for the longest of them at INDEX_STEP. It never shrinks
// on one page (`shown`: the spread the board has), so the cards do not change size back
// and forth as a fan grows and shrinks.
export function fanSpread(piles, kind, shown = 0) {
  let longest = 0;
  for (const [id, cards] of Object.entries(piles)) {
    if (id[0] === kind) longest = Math.max(longest, cards.length);
  }
  const need = Math.round(Math.max(0, longest - 1) * INDEX_STEP * 100) / 100;
  return Math.max(FAN_SPREAD, need, shown);
}

// The board of one family in a root element. Its zones and pile boxes are built once; a
// draw rebuilds only the piles whose cards changed (reusing each card's node, also when
// the card went to another pile), and a selection or target only toggles classes.
class Board {
  constructor(root, family) {
    this.root = root;
    this.family = family;
    this.piles = new Map(); // id -> {node, sig, cards: [node], label}
    this.stock = null;
    this.spread = { t: 0, r: 0 }; // the fans' and the reserves' boxes (fanSpread)
    this.keyHints = null;
    this.found = null;
  }

  pileEl(id, kind, placeholderText) {
    const node = el("div", { class: "pile pile-" + kind, role: "group", dataset: { pile: id } });
    const entry = { node, sig: null, cards: [], kind, placeholderText, name: pileName(id), handle: null, label: "" };
    this.piles.set(id, entry);
    return node;
  }

  // The zones and empty pile boxes of the family.
  build(opts) {
    this.piles.clear();
    const stockArea = el("div", { class: "stock-area" });
    this.stock = { area: stockArea, count: null, node: null };
    let parts;
    if (this.family === "bristol") {
      const found = el("div", { class: "foundations", role: "group", "aria-label": gettext("Foundations"), dataset: { zone: "f" } });
      for (const id of ["f1", "f2", "f3", "f4"]) found.append(this.pileEl(id, "squared", rankLabel("A")));
      this.found = found;
      const top = el("div", { class: "board-top" }, found, stockArea);
      const fans = el("div", { class: "fans", role: "group", "aria-label": gettext("Tableau") });
      for (let i = 1; i <= 8; i++) fans.append(this.pileEl("t" + i, "fan"));
      const reserves = el("div", { class: "reserves", role: "group", "aria-label": gettext("Reserve") });
      for (let i = 1; i <= 3; i++) reserves.append(this.pileEl("r" + i, "fan"));
      parts = [top, fans, reserves];
    } else {
      this.found = null;
      const aceWrap = el("div", { class: "ace-area" }, el("span", { class: "zone-label" }, gettext("Ace pile")), this.pileEl("a", "squared", rankLabel("A")));
      if (opts.noAces) aceWrap.classList.add("no-aces");
      const top = el("div", { class: "board-top" }, aceWrap, stockArea);
      const rows = el("div", { class: "gallery-rows" });
      const rowNames = [gettext("Top row"), gettext("Middle row"), gettext("Bottom row")];
      for (let r = 0; r < 3; r++) {
        const starts = rowStarts(r);
        const label = rowNames[r] + ": " + starts.join(" – ");
        const row = el("div", { class: "gallery-row", role: "group", "aria-label": label });
        // The start cards beside the row, one above the other (also on a phone).
        row.append(el("div", { class: "row-label", "aria-hidden": "true", title: label }, ...starts.map((rank) => el("span", {}, rank))));
        const slots = el("div", { class: "slots" });
        for (let c = 1; c <= 8; c++) slots.append(this.pileEl("g" + (r * 8 + c), "fan", starts[0]));
        row.append(slots);
        rows.append(row);
      }
      const reserves = el("div", { class: "reserves", role: "group", "aria-label": gettext("Reserve") });
      for (let i = 1; i <= 8; i++) reserves.append(this.pileEl("r" + i, "fan"));
      parts = [top, rows, reserves];
    }
    this.root.replaceChildren(...parts);
    this.root.dataset.family = this.family;
  }

  // The piles whose cards (or box) differ from what is drawn.
  changed(opts) {
    const out = [];
    for (const [id, entry] of this.piles) {
      if (entry.sig !== this.sig(id, opts)) out.push(id);
    }
    if (this.stock.count !== opts.stock) out.push("s");
    return out;
  }

  sig(id, opts) {
    const cards = opts.piles[id] || [];
    const spread = id[0] === "g" ? SLOT_SPREAD : this.spread[id[0]] || 0;
    return cards.join(",") + "|" + spread + "|" + (opts.keyHints && opts.keys ? opts.keys[id] || "" : "") + "|" + !!opts.interactive;
  }

  // Rebuild the cards of the piles `ids` (their nodes reused by card code).
  fill(ids, opts) {
    const pool = new Map(); // code -> [node] taken off the changed piles
    const wanted = ids.map((id) => [id, opts.piles[id] || []]).filter(([id]) => this.piles.has(id));
    for (const [id, cards] of wanted) {
      const entry = this.piles.get(id);
      const shown = entry.kind === "fan" ? cards : cards.slice(-1);
      entry.cards.forEach((node, i) => {
        if (shown[i] !== node.dataset.card) {
          if (!pool.has(node.dataset.card)) pool.set(node.dataset.card, []);
          pool.get(node.dataset.card).push(node);
        }
      });
    }
    for (const [id, cards] of wanted) this.fillPile(id, cards, opts, pool);
    if (ids.includes("s")) this.fillStock(opts);
  }

  fillPile(id, cards, opts, pool) {
    const entry = this.piles.get(id);
    const { node: pile, kind, name } = entry;
    const n = cards.length;
    const slot = id[0] === "g";
    const spread = kind === "fan" ? (slot ? SLOT_SPREAD : this.spread[id[0]]) : 0;
    const offsets = kind === "fan" ? fanOffsets(n, spread, slot ? INDEX_STEP : FAN_STEP) : [0];
    pile.style.setProperty("--spread", spread);
    const shown = kind === "fan" ? cards : cards.slice(-1);
    const nodes = shown.map((code, i) => {
      const kept = entry.cards[i];
      const node = kept && kept.dataset.card === code ? kept : pool.get(code)?.pop() || cardNode(code);
      node.style.setProperty("--i", i);
      node.style.setProperty("--y", offsets[i] || 0);
      node.setAttribute("aria-label", interpolate(gettext("%(card)s on %(pile)s"), { card: cardName(code), pile: name }, true));
      for (const a of ["tabindex", "aria-pressed"]) node.removeAttribute(a);
      node.setAttribute("role", "img");
      node.classList.remove("handle", "drag-source");
      return node;
    });
    const children = [];
    const key = opts.keys && opts.keys[id];
    if (key && opts.keyHints) children.push(el("kbd", { class: "pile-key", "aria-hidden": "true" }, key));
    children.push(...nodes);
    if (kind === "squared" && n > 1) children.push(el("span", { class: "pile-count", "aria-hidden": "true" }, String(n)));
    let handle = nodes[nodes.length - 1];
    if (!n) {
      // An image of the empty place, or the button to play to it: a bare div may not
      // carry a label (axe's aria-prohibited-attr).
      handle = el("div", { class: "card placeholder", role: "img" }, entry.placeholderText ? el("span", { "aria-hidden": "true" }, entry.placeholderText) : null);
      children.push(handle);
    }
    entry.label = n ? handle.getAttribute("aria-label") : cap(interpolate(gettext("empty %(pile)s"), { pile: name }, true));
    if (opts.interactive) {
      handle.setAttribute("role", "button");
      handle.setAttribute("tabindex", "0");
      handle.classList.add("handle");
    }
    entry.handle = handle;
    entry.cards = nodes;
    pile.replaceChildren(...children);
    pile.classList.toggle("empty", !n);
    pile.setAttribute("aria-label", interpolate(ngettext("%(pile)s, %(n)s card", "%(pile)s, %(n)s cards", n), { pile: cap(name), n }, true));
    entry.sig = this.sig(id, opts);
  }

  fillStock(opts) {
    const count = opts.stock;
    const label = interpolate(ngettext("Stock: %(n)s card", "Stock: %(n)s cards", count), { n: count }, true);
    const node = el("div", { class: "pile pile-stock" + (count ? "" : " empty"), dataset: { pile: "s" } });
    const back = el(
      "div",
      { class: "card " + (count ? "card-back" : "placeholder"), "aria-label": label, role: "img" },
      el("span", { class: "stock-count", "aria-hidden": "true" }, String(count)),
    );
    if (opts.interactive && count) {
      back.setAttribute("role", "button");
      back.setAttribute("tabindex", "0");
      back.classList.add("handle");
      back.setAttribute("aria-label", label + " – " + gettext("deal"));
    }
    node.append(back);
    if (opts.keyHints && opts.keys && opts.keys.s) node.prepend(el("kbd", { class: "pile-key", "aria-hidden": "true" }, opts.keys.s));
    this.stock.area.replaceChildren(node);
    this.stock.count = count;
  }

  // What the player sees of the play, as classes and states only: nothing is rebuilt.
  decorate(opts) {
    const ui = opts.ui || {};
    const marks = opts.marks || [];
    for (const [id, entry] of this.piles) {
      const selected = ui.selected === id;
      const target = !!(ui.targets && ui.targets.has(id));
      const { node, handle } = entry;
      node.classList.toggle("selected", selected);
      node.classList.toggle("target", target);
      node.classList.toggle("source", !!(ui.sources && ui.sources.has(id)));
      node.classList.toggle("marked", marks.includes(id));
      node.classList.toggle("pending", opts.pending === id);
      const states = [];
      if (selected) states.push(gettext("selected"));
      if (target) states.push(gettext("can go here"));
      const label = entry.label + (states.length ? " (" + states.join(", ") + ")" : "");
      if (handle.getAttribute("aria-label") !== label) handle.setAttribute("aria-label", label);
      if (opts.interactive && selected) handle.setAttribute("aria-pressed", "true");
      else handle.removeAttribute("aria-pressed");
    }
    if (this.found) this.found.classList.toggle("target", !!(ui.targets && ui.targets.has("f")));
    if (this.found) {
      const hint = this.found.querySelector(":scope > .zone-key");
      const want = opts.keyHints && opts.keys && opts.keys.f;
      if (want && !hint) this.found.prepend(el("kbd", { class: "zone-key", "aria-hidden": "true" }, opts.keys.f));
      else if (!want && hint) hint.remove();
    }
  }
}

// Draw a position into root. opts: family, piles, stock, interactive, keys, keyHints,
// ui {selected, targets:Set, sources:Set}, noAces, marks (pile ids whose top card is
// highlighted: a hint's cards, the card a replay step moved), pending (the pile whose top
// card a move waiting for the server put there), and `before(ids)`, called
// with the piles about to be rebuilt ("s": the stock) before anything changes (where
// the cards are then: motion.js). Returns those ids.
export function renderBoard(root, opts) {
  const active = document.activeElement;
  const focusPile = active && root.contains(active) ? active.closest("[data-pile]")?.dataset.pile : null;
  let board = root._board;
  const fresh = !board || board.family !== opts.family || board.noAces !== !!opts.noAces;
  if (fresh) {
    board = root._board = new Board(root, opts.family);
    board.noAces = !!opts.noAces;
    board.build(opts);
  }
  const spread = { t: fanSpread(opts.piles, "t", board.spread.t), r: fanSpread(opts.piles, "r", board.spread.r) };
  const grown = spread.t !== board.spread.t || spread.r !== board.spread.r;
  const refit = fresh || grown || board.keyHints !== !!opts.keyHints || !root.style.getPropertyValue("--cw");
  board.spread = spread;
  board.keyHints = !!opts.keyHints;
  const ids = board.changed(opts);
  if (opts.before) opts.before(refit ? null : ids);
  board.fill(ids, opts);
  board.decorate(opts);
  root.classList.toggle("key-hints", !!opts.keyHints);
  if (refit) fitBoard(root);
  if (focusPile) {
    const again = root.querySelector(`[data-pile="${focusPile}"] .handle`);
    if (again && again !== document.activeElement) again.focus({ preventScroll: true });
  }
  return refit ? null : ids;
}

// The card width's bounds (px): readable and tappable, and not absurd on a wall screen.
const MIN_CW = 26;
const MAX_CW = 120;

// Size the cards so that the whole board fits the window: the board's size is linear in
// the card width (piles have fixed boxes), so two trial widths give its size for any,
// and the card width is the largest that fits both the width and the height left.
export function fitBoard(root) {
  const measure = (cw) => {
    root.style.setProperty("--cw", cw + "px");
    const r = root.getBoundingClientRect();
    return [r.width, r.height];
  };
  root.classList.add("measuring");
  const [w1, h1] = measure(40);
  const [w2, h2] = measure(80);
  root.classList.remove("measuring");
  const [bw, bh] = [(w2 - w1) / 40, (h2 - h1) / 40];
  const [aw, ah] = [w1 - 40 * bw, h1 - 40 * bh];
  const container = root.parentElement;
  const style = getComputedStyle(container);
  const width = container.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const top = root.getBoundingClientRect().top + window.scrollY;
  // A board in a frame of fixed height (the landing page's preview) fills that frame;
  // any other fills the window below its top.
  const fixed = container.classList.contains("board-frame-fixed");
  const height = fixed ? container.clientHeight : window.innerHeight - top - 6;
  const cw = Math.floor(Math.min((width - aw) / bw, (height - ah) / bh));
  root.style.setProperty("--cw", Math.max(MIN_CW, Math.min(MAX_CW, cw)) + "px");
}

// Keep a board fitted to the window as it changes size (or a phone turns).
export function fitOnResize(root) {
  let pending = false;
  window.addEventListener("resize", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      fitBoard(root);
    });
  });
}
