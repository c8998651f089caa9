// Replay viewer: steps through a finished daily game with the replay API (?step=k).
/* global gettext, ngettext, interpolate */
import { fitOnResize, renderBoard } from "./board.js";
import { api, errorText } from "./common.js";

const root = document.getElementById("replay");
const family = root.dataset.family;
const url = `/api/v1/daily/${root.dataset.variant}/${root.dataset.day}/results/${root.dataset.result}/replay/`;
const boardEl = document.getElementById("board");
fitOnResize(boardEl);
const slider = document.getElementById("rp-slider");
const stepOut = document.getElementById("rp-step");
const message = document.getElementById("replay-message");
const cache = new Map();
let info = null;
let step = 0;
let wanted = 0;

function moveText(m) {
  return m === "undo" ? gettext("undo") : m;
}

async function position(k) {
  if (!cache.has(k)) cache.set(k, api("GET", `${url}?step=${k}`).then((d) => d.position));
  return cache.get(k);
}

async function show(k) {
  k = Math.max(0, Math.min(info.steps, k));
  wanted = k;
  let pos;
  try {
    pos = await position(k);
  } catch (err) {
    cache.delete(k);
    message.textContent = errorText(err);
    return;
  }
  if (wanted !== k) return; // a newer step was asked for meanwhile
  step = k;
  const piles = { ...pos.piles };
  const stock = (piles.s || []).length;
  delete piles.s;
  renderBoard(boardEl, { family, piles, stock, interactive: false, noAces: root.dataset.variant === "royal-parade" });
  slider.value = String(k);
  stepOut.textContent =
    k === 0
      ? interpolate(gettext("Deal (0 of %(n)s)"), { n: info.steps }, true)
      : interpolate(gettext("Move %(k)s of %(n)s: %(move)s"), { k, n: info.steps, move: moveText(info.moves[k - 1]) }, true);
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

document.getElementById("rp-first").addEventListener("click", () => show(0));
document.getElementById("rp-prev").addEventListener("click", () => show(step - 1));
document.getElementById("rp-next").addEventListener("click", () => show(step + 1));
document.getElementById("rp-last").addEventListener("click", () => show(info.steps));
slider.addEventListener("input", () => show(Number(slider.value)));
document.addEventListener("keydown", (ev) => {
  if (!info || ev.target === slider || ["INPUT", "SELECT", "TEXTAREA"].includes(ev.target.tagName)) return;
  const go = { ArrowLeft: step - 1, ArrowRight: step + 1, Home: 0, End: info.steps }[ev.key];
  if (go !== undefined) {
    ev.preventDefault();
    show(go);
  }
});

start();
