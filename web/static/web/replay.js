// Replay viewer: steps through a finished daily or race game with its replay API (?step=k).
/* global gettext, ngettext, interpolate */
import { fitOnResize, renderBoard } from "./board.js";
import { foundationFor, moveWords } from "./cards.js";
import { api, errorText } from "./common.js";
import { slide, snapshot } from "./motion.js";

const root = document.getElementById("replay");
const family = root.dataset.family;
const url = root.dataset.url; // a daily's result or a race's player
const boardEl = document.getElementById("board");
fitOnResize(boardEl);
const slider = document.getElementById("rp-slider");
const stepOut = document.getElementById("rp-step");
const message = document.getElementById("replay-message");
const cache = new Map();
let info = null;
let step = 0;
let wanted = 0;

// A move of the list: its notation (t3-f), a deal or an undo in words.
function moveText(m) {
  return { undo: gettext("undo"), deal: gettext("deal"), "deal-reverse": gettext("deal the last row right to left") }[m] || m;
}

const pilesOf = (pos) => {
  const piles = { ...pos.piles };
  delete piles.s;
  return piles;
};

// The pile whose top card a step moved (none for a deal or an undo).
function movedPile(m, before, after) {
  const [src, dst] = m.split("-");
  if (!dst) return [];
  if (dst !== "f") return [dst];
  const card = (before.piles[src] || []).slice(-1)[0];
  const f = ["f1", "f2", "f3", "f4"].find((id) => (after.piles[id] || []).slice(-1)[0] === card);
  return [f || foundationFor(card, before.piles) || "f1"];
}

async function position(k) {
  if (!cache.has(k)) cache.set(k, api("GET", `${url}?step=${k}`).then((d) => d.position));
  return cache.get(k);
}

async function show(k) {
  k = Math.max(0, Math.min(info.steps, k));
  wanted = k;
  let pos;
  let before = null;
  try {
    pos = await position(k);
    if (k > 0) before = await position(k - 1);
  } catch (err) {
    cache.delete(k);
    message.textContent = errorText(err);
    return;
  }
  if (wanted !== k) return; // a newer step was asked for meanwhile
  step = k;
  const piles = pilesOf(pos);
  const stock = (pos.piles.s || []).length;
  const m = k > 0 ? info.moves[k - 1] : null;
  const marks = m ? movedPile(m, before, pos) : [];
  // The cards that moved slide there, as in play (a step back slides them back).
  let seen = null;
  const note = (ids) => (seen = !ids || ids.length ? snapshot(boardEl, ids) : null);
  renderBoard(boardEl, { family, piles, stock, interactive: false, noAces: root.dataset.variant === "royal-parade", marks, before: note });
  slide(boardEl, seen);
  slider.value = String(k);
  stepOut.textContent =
    k === 0
      ? interpolate(gettext("Deal (0 of %(n)s)"), { n: info.steps }, true)
      : interpolate(gettext("Move %(k)s of %(n)s: %(move)s"), { k, n: info.steps, move: moveWords(m, pilesOf(before)) }, true);
  for (const [i, li] of [...document.querySelectorAll("#rp-moves li")].entries()) {
    li.classList.toggle("current", i === k - 1);
    if (i === k - 1) li.setAttribute("aria-current", "step");
    else li.removeAttribute("aria-current");
  }
  document.getElementById("rp-first").disabled = k === 0;
  document.getElementById("rp-prev").disabled = k === 0;
  document.getElementById("rp-next").disabled = k === info.steps;
  document.getElementById("rp-last").disabled = k === info.steps;
  // Fetch the next position ahead, so "next" feels instant.
  if (k < info.steps) position(k + 1).catch(() => cache.delete(k + 1));
}

async function start() {
  try {
    info = await api("GET", url + "?step=0");
  } catch (err) {
    message.textContent = errorText(err);
    return;
  }
  cache.set(0, Promise.resolve(info.position));
  document.getElementById("replay-summary").textContent = interpolate(
    gettext("%(player)s: %(result)s, %(moves)s."),
    {
      player: info.player,
      result: info.won
        ? gettext("won")
        : interpolate(ngettext("%(n)s card home", "%(n)s cards home", info.cards_home), { n: info.cards_home }, true),
      moves: interpolate(ngettext("%(n)s move", "%(n)s moves", info.steps), { n: info.steps }, true),
    },
    true,
  );
  slider.max = String(info.steps);
  const list = document.getElementById("rp-moves");
  info.moves.forEach((m, i) => {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "link-button";
    b.textContent = `${i + 1}. ${moveText(m)}`;
    b.addEventListener("click", () => show(i + 1));
    li.append(b);
    list.append(li);
  });
  show(0);
}

// Steps count from the step last asked for (`wanted`), not the one shown: each press is
// one step even while the positions are still on their way.
const auto = document.getElementById("rp-auto");
let timer = null;
function stopAuto() {
  clearInterval(timer);
  timer = null;
  auto.setAttribute("aria-pressed", "false");
}
// Autoplay: a step every 0.8 s (at 1×; the speed control) to the end (from the start when
// at the end).
const speed = document.getElementById("rp-speed");
function play() {
  clearInterval(timer);
  timer = setInterval(() => (wanted >= info.steps ? stopAuto() : show(wanted + 1)), Number(speed.value));
}
auto.addEventListener("click", () => {
  if (timer) return stopAuto();
  if (wanted >= info.steps) show(0);
  auto.setAttribute("aria-pressed", "true");
  play();
});
speed.addEventListener("change", () => {
  if (timer) play();
});
const by = (go) => () => {
  stopAuto();
  show(go());
};
document.getElementById("rp-first").addEventListener("click", by(() => 0));
document.getElementById("rp-prev").addEventListener("click", by(() => wanted - 1));
document.getElementById("rp-next").addEventListener("click", by(() => wanted + 1));
document.getElementById("rp-last").addEventListener("click", by(() => info.steps));
slider.addEventListener("input", by(() => Number(slider.value)));
document.addEventListener("keydown", (ev) => {
  if (!info || ev.target === slider || ["INPUT", "SELECT", "TEXTAREA"].includes(ev.target.tagName)) return;
  const go = { ArrowLeft: wanted - 1, ArrowRight: wanted + 1, Home: 0, End: info.steps }[ev.key];
  if (go !== undefined) {
    ev.preventDefault();
    stopAuto();
    show(go);
  }
});

start();
