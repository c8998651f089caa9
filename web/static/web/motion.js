// Motion on the board, with the browser's own Web Animations API (FLIP): before a
// redraw the page notes where every card is, after it each card that moved slides from
// its old place to its new one, cards new on a reserve fly out of the stock one by one,
// and a won game celebrates on the board. With prefers-reduced-motion nothing moves.
import { cardSvg } from "./cards.js";

const reduced = window.matchMedia("(prefers-reduced-motion: reduce)");
export const SLIDE_MS = 200;
const DEAL_STAGGER_MS = 55;
// Cards of a line drawn at once (Finish) leave one after the other, this far apart.
export const STAGGER_MS = 70;
const EASE = "cubic-bezier(0.2, 0.7, 0.3, 1)";

// Whether the player asked for less motion (read each time: it can change).
export const still = () => reduced.matches;

const pileOf = (node) => node.closest("[data-pile]")?.dataset.pile;

// Where a card's box is laid out, whatever transform animates it now.
function home(node) {
  const pile = node.parentElement.getBoundingClientRect();
  return `${Math.round(pile.left + node.offsetLeft)},${Math.round(pile.top + node.offsetTop)}`;
}

// Where every card of the board is now (as seen, and as laid out), its animation if it
// is in flight, and the stock: what `slide` starts from.
// `ids`: only the cards of these piles (the ones a draw rebuilds; null: all).
export function snapshot(root, ids = null) {
  if (still()) return null;
  const cards = [];
  const piles = ids ? ids.filter((id) => id !== "s").map((id) => root.querySelector(`[data-pile="${id}"]`)) : [root];
  for (const node of piles.flatMap((p) => (p ? [...p.querySelectorAll(".card[data-card]")] : []))) {
    const anim = node.getAnimations().find((a) => a.playState === "running" || a.pending);
    cards.push({
      node,
      code: node.dataset.card,
      pile: pileOf(node),
      i: node.style.getPropertyValue("--i"),
      rect: node.getBoundingClientRect(),
      home: home(node),
      anim: anim && {
        frames: anim.effect.getKeyframes(),
        timing: anim.effect.getTiming(),
        time: anim.currentTime,
      },
    });
  }
  return { ids, cards, stock: root.querySelector(".pile-stock .card")?.getBoundingClientRect() };
}

// A redraw that replaced a card's node: a card in flight that stays where it lands goes on
// flying in its new node, from where it was.
function resume(node, anim) {
  node.classList.add("moving");
  const again = node.animate(anim.frames, anim.timing);
  again.currentTime = anim.time;
  const done = () => node.classList.remove("moving");
  again.finished.then(done, done);
  return again;
}

function fly(node, from, delay) {
  const to = node.getBoundingClientRect();
  const dx = from.left - to.left;
  const dy = from.top - to.top;
  if (Math.abs(dx) < 1 && Math.abs(dy) < 1) return null;
  node.classList.add("moving");
  const anim = node.animate(
    [{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }],
    { duration: SLIDE_MS, easing: EASE, delay, fill: "backwards" },
  );
  anim.finished.then(
    () => node.classList.remove("moving"),
    () => node.classList.remove("moving"),
  );
  return anim;
}

// After a redraw: each card slides from where `before` saw it. A card is the same card
// when its code, pile and place in the pile are the same (it may still have moved, as a
// fan tightens); otherwise a card of the same code that is gone from its old place has
// moved here (two decks: equal codes are equal cards). A card new on a reserve that was
// nowhere before came from the stock: those fly out one by one, in reserve order.
// `order`: card codes that leave one after the other (a finishing line), STAGGER_MS apart.
export function slide(root, before, order = []) {
  if (!before || still()) return [];
  const scope = before.ids ? before.ids.filter((id) => id !== "s").map((id) => root.querySelector(`[data-pile="${id}"]`)) : [root];
  const nodes = scope.flatMap((p) => (p ? [...p.querySelectorAll(".card[data-card]")] : []));
  const now = nodes.map((node) => ({
    node,
    code: node.dataset.card,
    pile: pileOf(node),
    i: node.style.getPropertyValue("--i"),
  }));
  const left = [...before.cards];
  const take = (match) => {
    const k = left.findIndex(match);
    return k < 0 ? null : left.splice(k, 1)[0];
  };
  const pairs = [];
  const rest = [];
  const anims = [];
  for (const card of now) {
    const same = take((o) => o.code === card.code && o.pile === card.pile && o.i === card.i);
    if (!same) rest.push(card);
    else if (same.home !== home(card.node)) pairs.push([card, same.rect]);
    else if (same.anim && same.node !== card.node) anims.push(resume(card.node, same.anim));
  }
  const dealt = [];
  for (const card of rest) {
    const moved = take((o) => o.code === card.code);
    if (moved) pairs.push([card, moved.rect]);
    else if (card.pile && card.pile[0] === "r" && before.stock) dealt.push(card);
  }
  const queue = [...order];
  const delay = (code) => {
    const k = queue.indexOf(code);
    if (k < 0) return 0;
    queue[k] = null; // two decks: the next equal code is the next card
    return k * STAGGER_MS;
  };
  for (const [card, rect] of pairs) anims.push(fly(card.node, rect, delay(card.code)));
  dealt.forEach((card, k) => anims.push(fly(card.node, before.stock, k * DEAL_STAGGER_MS)));
  return anims.filter(Boolean);
}

// A new game: every card flies out of the stock one by one, in dealing order.
export function dealIn(root) {
  if (still()) return [];
  const stock = root.querySelector(".pile-stock .card")?.getBoundingClientRect();
  if (!stock) return [];
  const order = (node) => {
    const id = pileOf(node) || "";
    const n = Number(id.slice(1)) || 0;
    // Fans or slots first, then the reserves (the spec's dealing order).
    return (id[0] === "r" ? 100 : 0) + n * 4 + Number(node.style.getPropertyValue("--i") || 0);
  };
  const cards = [...root.querySelectorAll(".card[data-card]")].sort((a, b) => order(a) - order(b));
  const step = Math.min(DEAL_STAGGER_MS, 900 / cards.length);
  return cards.map((node, k) => fly(node, stock, k * step)).filter(Boolean);
}

// A won game: every card leaves its home pile in a cascade (the top cards first, pile
// after pile), each bouncing down and off the board, and the board glows; then the cards
// are back home. Resolves when it is over (at once when nothing may move). `piles`: the
// won position's piles (a foundation shows only its top card; all of them fly).
export async function celebrate(root, piles = {}) {
  if (still()) return;
  // The last cards of the game land first.
  await Promise.allSettled(root.getAnimations({ subtree: true }).map((a) => a.finished));
  // Where a card is laid out (not where a transform shows it now).
  const laid = (node) => {
    const pile = node.parentElement.getBoundingClientRect();
    return { left: pile.left + node.offsetLeft, top: pile.top + node.offsetTop, width: node.offsetWidth, height: node.offsetHeight };
  };
  const homes = [...root.querySelectorAll(".foundations [data-pile], .ace-area [data-pile], .slots [data-pile]")];
  const queues = homes.map((pile) => {
    const shown = [...pile.querySelectorAll(".card[data-card]")];
    if (!shown.length) return [];
    // A squared pile: every card from its top down; a gallery place: its cards as laid out.
    const codes = pile.classList.contains("pile-squared") ? [...(piles[pile.dataset.pile] || [])].reverse() : [];
    if (codes.length) return codes.map((code) => ({ code, box: laid(shown[0]) }));
    return shown.reverse().map((n) => ({ code: n.dataset.card, box: laid(n) }));
  });
  const cards = [];
  while (queues.some((q) => q.length)) for (const q of queues) if (q.length) cards.push(q.shift());
  if (!cards.length) return;
  const layer = document.createElement("div");
  layer.className = "cascade";
  layer.setAttribute("aria-hidden", "true");
  document.body.append(layer);
  root.classList.add("cascading");
  const floor = window.innerHeight;
  const step = Math.min(60, 2200 / cards.length);
  const anims = cards.map(({ code, box }, k) => {
    const node = document.createElement("div");
    node.className = "card cascade-card";
    node.style.cssText = `left:${box.left}px;top:${box.top}px;width:${box.width}px;height:${box.height}px;--cw:${box.width}px`;
    node.append(cardSvg(code));
    layer.prepend(node); // the first to fly lies on top

    return node.animate(bounce(box, floor, k), { duration: 1400, delay: k * step, easing: "linear", fill: "backwards" });
  });
  anims.push(
    root.animate(
      [
        { boxShadow: "inset 0 0 40px rgba(0, 0, 0, 0.25)" },
        { boxShadow: "inset 0 0 90px rgba(255, 215, 0, 0.85)" },
        { boxShadow: "inset 0 0 60px rgba(255, 215, 0, 0.4)" },
      ],
      { duration: 1800, easing: "ease-in-out" },
    ),
  );
  await Promise.allSettled(anims.map((a) => a.finished));
  layer.remove();
  root.classList.remove("cascading");
}

// The keyframes of one card's fall: thrown sideways, bouncing on the window's bottom edge
// with less height each time, until it leaves the window at a side.
function bounce(box, floor, k) {
  const frames = [];
  const dir = k % 2 ? -1 : 1;
  const vx = dir * (0.25 + ((k * 37) % 10) / 40) * window.innerWidth; // px per second
  let y = 0;
  let vy = -300 - ((k * 53) % 7) * 40;
  const g = 2600;
  const bottom = floor - box.top - box.height;
  const n = 28;
  for (let i = 0; i <= n; i++) {
    const t = (1.4 * i) / n;
    frames.push({ transform: `translate(${vx * t}px, ${y}px)`, opacity: i === n ? 0 : 1 });
    vy += g * (1.4 / n);
    y += vy * (1.4 / n);
    if (y > bottom) {
      y = bottom;
      vy = -Math.abs(vy) * 0.62;
    }
  }
  return frames;
}
