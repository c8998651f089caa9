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

function cardNode(code, pileLabel, i, y) {
  const node = el("div", {
    class: "card",
    role: "img",
    "aria-label": interpolate(gettext("%(card)s on %(pile)s"), { card: cardName(code), pile: pileLabel }, true),
    dataset: { card: code },
  });
  node.style.setProperty("--i", i);
  node.style.setProperty("--y", y);
  node.append(cardSvg(code));
  return node;
}

// A fanned card shows this much of itself (in card widths) above the next one: its whole
// corner index (cards.js), so a Jack never reads "I" nor a Queen "O".
export const INDEX_STEP = 0.35;
// How far (in card widths) the top card of a spread pile may sit below its first card:
// room for ten cards at INDEX_STEP (a reserve once the stock is dealt out), and a
// gallery place's four.
const FAN_SPREAD = 9 * INDEX_STEP;
const SLOT_SPREAD = 3 * INDEX_STEP;
const FAN_STEP = 0.42;
// The steps of a fan that holds more than its box takes at FAN_STEP: the middle is
// squashed before the top cards (the ones a player reads and moves), and no card below
// INDEX_STEP while the box has room for that.
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

// kind: "fan" (spread down), "squared" (top card only), "slot" (gallery place)
function pileNode(id, cards, kind, opts) {
  const name = pileName(id);
  const ui = opts.ui || {};
  const classes = ["pile", "pile-" + kind];
  if (ui.selected === id) classes.push("selected");
  if (ui.targets && ui.targets.has(id)) classes.push("target");
  if (ui.sources && ui.sources.has(id)) classes.push("source");
  if (opts.marks && opts.marks.includes(id)) classes.push("marked");
  if (!cards.length) classes.push("empty");
  const n = cards.length;
  const pile = el("div", {
    class: classes.join(" "),
    role: "group",
    "aria-label": interpolate(
      ngettext("%(pile)s, %(n)s card", "%(pile)s, %(n)s cards", n),
      { pile: cap(name), n },
      true,
    ),
    dataset: { pile: id },
  });
  // A spread pile has a fixed box (so the board never changes size); its overlap
  // tightens as it grows, so the top card always stays inside the box.
  const slot = id[0] === "g";
  const spread = kind === "fan" ? (slot ? SLOT_SPREAD : FAN_SPREAD) : 0;
  const offsets = kind === "fan" ? fanOffsets(n, spread, slot ? INDEX_STEP : FAN_STEP) : [0];
  pile.style.setProperty("--spread", spread);
  const key = opts.keys && opts.keys[id];
  if (key && opts.keyHints) pile.append(el("kbd", { class: "pile-key", "aria-hidden": "true" }, key));
  const shown = kind === "fan" ? cards : cards.slice(-1);
  shown.forEach((code, i) => pile.append(cardNode(code, name, i, offsets[i] || 0)));
  if (kind === "squared" && n > 1) {
    pile.append(el("span", { class: "pile-count", "aria-hidden": "true" }, String(n)));
  }
  // The one focusable handle of the pile: its top card, or the empty place.
  let handle;
  const states = [];
  if (ui.selected === id) states.push(gettext("selected"));
  if (ui.targets && ui.targets.has(id)) states.push(gettext("can go here"));
  const suffix = states.length ? " (" + states.join(", ") + ")" : "";
  if (n) {
    handle = pile.lastElementChild.classList.contains("card")
      ? pile.lastElementChild
      : pile.querySelector(".card:last-of-type");
    handle.setAttribute("aria-label", handle.getAttribute("aria-label") + suffix);
  } else {
    const placeholder = el(
      "div",
      // An image of the empty place, or the button to play to it (below): a bare div may
      // not carry a label (axe's aria-prohibited-attr).
      {
        class: "card placeholder",
        role: "img",
        "aria-label": cap(interpolate(gettext("empty %(pile)s"), { pile: name }, true)) + suffix,
      },
      opts.placeholderText ? el("span", { "aria-hidden": "true" }, opts.placeholderText) : null,
    );
    pile.append(placeholder);
    handle = placeholder;
  }
  if (opts.interactive) {
    handle.setAttribute("role", "button");
    handle.setAttribute("tabindex", "0");
    handle.classList.add("handle");
    if (ui.selected === id) handle.setAttribute("aria-pressed", "true");
  }
  return pile;
}

function stockNode(count, opts) {
  const label = interpolate(
    ngettext("Stock: %(n)s card", "Stock: %(n)s cards", count),
    { n: count },
    true,
  );
  const attrs = { class: "pile pile-stock" + (count ? "" : " empty"), dataset: { pile: "s" } };
  const node = el("div", attrs);
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
  if (opts.keyHints && opts.keys && opts.keys.s) {
    node.prepend(el("kbd", { class: "pile-key", "aria-hidden": "true" }, opts.keys.s));
  }
  return node;
}

function bristol(piles, stock, opts) {
  const found = el("div", { class: "foundations", role: "group", "aria-label": gettext("Foundations"), dataset: { zone: "f" } });
  for (const id of ["f1", "f2", "f3", "f4"]) {
    found.append(pileNode(id, piles[id] || [], "squared", { ...opts, placeholderText: rankLabel("A") }));
  }
  if (opts.ui && opts.ui.targets && opts.ui.targets.has("f")) found.classList.add("target");
  if (opts.keyHints && opts.keys && opts.keys.f) {
    found.prepend(el("kbd", { class: "zone-key", "aria-hidden": "true" }, opts.keys.f));
  }
  const top = el("div", { class: "board-top" }, found, el("div", { class: "stock-area" }, stockNode(stock, opts)));
  const fans = el("div", { class: "fans", role: "group", "aria-label": gettext("Tableau") });
  for (let i = 1; i <= 8; i++) fans.append(pileNode("t" + i, piles["t" + i] || [], "fan", opts));
  const reserves = el("div", { class: "reserves", role: "group", "aria-label": gettext("Reserve") });
  for (let i = 1; i <= 3; i++) reserves.append(pileNode("r" + i, piles["r" + i] || [], "fan", opts));
  return [top, fans, reserves];
}

function gallery(piles, stock, opts) {
  const ace = pileNode("a", piles.a || [], "squared", { ...opts, placeholderText: rankLabel("A") });
  const aceWrap = el("div", { class: "ace-area" }, el("span", { class: "zone-label" }, gettext("Ace pile")), ace);
  if (opts.noAces) aceWrap.classList.add("no-aces");
  const top = el("div", { class: "board-top" }, aceWrap, el("div", { class: "stock-area" }, stockNode(stock, opts)));
  const rows = el("div", { class: "gallery-rows" });
  const rowNames = [gettext("Top row"), gettext("Middle row"), gettext("Bottom row")];
  for (let r = 0; r < 3; r++) {
    const starts = rowStarts(r);
    const label = rowNames[r] + ": " + starts.join(" – ");
    const row = el("div", { class: "gallery-row", role: "group", "aria-label": label });
    // The start cards beside the row, one above the other (also on a phone).
    row.append(
      el(
        "div",
        { class: "row-label", "aria-hidden": "true", title: label },
        ...starts.map((rank) => el("span", {}, rank)),
      ),
    );
    const slots = el("div", { class: "slots" });
    for (let c = 1; c <= 8; c++) {
      const id = "g" + (r * 8 + c);
      slots.append(pileNode(id, piles[id] || [], "fan", { ...opts, placeholderText: starts[0] }));
    }
    row.append(slots);
    rows.append(row);
  }
  const reserves = el("div", { class: "reserves", role: "group", "aria-label": gettext("Reserve") });
  for (let i = 1; i <= 8; i++) reserves.append(pileNode("r" + i, piles["r" + i] || [], "fan", opts));
  return [top, rows, reserves];
}

// Draw a position into root. opts: family, piles, stock, interactive, keys, keyHints,
// ui {selected, targets:Set, sources:Set}, noAces, marks (pile ids whose top card is
// highlighted: a hint's cards, the card a replay step moved).
export function renderBoard(root, opts) {
  const active = document.activeElement;
  const focusPile =
    active && root.contains(active) ? active.closest("[data-pile]")?.dataset.pile : null;
  const parts = opts.family === "bristol" ? bristol(opts.piles, opts.stock, opts) : gallery(opts.piles, opts.stock, opts);
  root.replaceChildren(...parts);
  const hintsChanged = root.classList.contains("key-hints") !== !!opts.keyHints;
  root.classList.toggle("key-hints", !!opts.keyHints);
  if (hintsChanged || !root.style.getPropertyValue("--cw")) fitBoard(root);
  if (focusPile) {
    const again = root.querySelector(`[data-pile="${focusPile}"] .handle`);
    if (again) again.focus({ preventScroll: true });
  }
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
  const height = window.innerHeight - top - 6;
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
