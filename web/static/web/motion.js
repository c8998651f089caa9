// Motion on the board, with the browser's own Web Animations API (FLIP): before a
// redraw the page notes where every card is, after it each card that moved slides from
// its old place to its new one, cards new on a reserve fly out of the stock one by one,
// and a won game celebrates on the board. With prefers-reduced-motion nothing moves.

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

// A won game: the cards home hop in a wave across the board, for about two seconds,
// and the board glows. Resolves when it is over (at once when nothing may move).
export function celebrate(root) {
  if (still()) return Promise.resolve();
  const home = [
    ...root.querySelectorAll(
      ".foundations .card[data-card], .ace-area .card[data-card], .slots .card[data-card]",
    ),
  ];
  const anims = home.map((node) => {
    const r = node.getBoundingClientRect();
    const delay = Math.round((r.left - root.getBoundingClientRect().left) * 0.9 + r.top * 0.3);
    return node.animate(
      [
        { transform: "none" },
        { transform: "translateY(-22px) rotate(-6deg) scale(1.06)", offset: 0.35 },
        { transform: "translateY(0) rotate(3deg)", offset: 0.7 },
        { transform: "none" },
      ],
      { duration: 700, delay: Math.min(delay, 1100), iterations: 1, easing: "ease-out" },
    );
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
  return Promise.allSettled(anims.map((a) => a.finished)).then(() => undefined);
}
