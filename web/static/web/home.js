// Home: start or resume a daily, start a practice game; a first visit sees today's
// practice deal and plays it without an account.
import { fitOnResize, renderBoard } from "./board.js";
import { foundationFor } from "./cards.js";
import { errorText, jsonScript, startGame } from "./common.js";
import { predictor } from "./predict.js";

const message = document.getElementById("home-message");
const show = (err) => (message.textContent = errorText(err));

for (const btn of document.querySelectorAll("[data-daily-play]")) {
  btn.addEventListener("click", () =>
    startGame(btn, `/api/v1/daily/${btn.dataset.variant}/${btn.dataset.date}/play/`, undefined, show),
  );
}

const form = document.getElementById("practice-form");
if (form) {
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const body = { variant: form.variant.value };
    const seed = form.seed.value.trim();
    if (seed) body.seed = seed; // a decimal string: seeds go up to 2**64
    startGame(form.querySelector("button"), "/api/v1/games/", body, show);
  });
}

// The first visit's preview is the game's start: picking a card up and putting it down
// there starts the guest's game with that move, and opens it.
const firstBoard = document.getElementById("first-board");
if (firstBoard) {
  const deal = jsonScript("first-deal");
  const { piles, stock } = deal.position;
  const family = deal.variant.family;
  const legal = predictor(deal.variant.key).moves(piles, stock) || [];
  const ui = { selected: null, targets: new Set(), sources: new Set() };
  for (const m of legal) if (!m.startsWith("deal")) ui.sources.add(m.split("-")[0]);
  const draw = () => renderBoard(firstBoard, { family, piles, stock, interactive: true, ui });
  draw();
  fitOnResize(firstBoard);
  const play = document.getElementById("first-play");
  const start = (first) =>
    startGame(play, "/api/v1/games/", { variant: play.dataset.variant, seed: play.dataset.seed }, show, first);
  play.addEventListener("click", () => start());
  const choose = (id) => {
    const dest = /^f\d$/.test(id) ? "f" : id;
    if (ui.selected && legal.includes(`${ui.selected}-${dest}`)) return start(`${ui.selected}-${dest}`);
    if (id === "s" && legal.includes("deal")) return start("deal");
    ui.selected = ui.sources.has(id) && ui.selected !== id ? id : null;
    ui.targets = new Set();
    for (const m of legal) {
      const [src, dst] = m.split("-");
      if (src !== ui.selected || !dst) continue;
      ui.targets.add(dst); // "f": the foundations take the click, the one it lands on lights
      if (dst === "f") ui.targets.add(foundationFor(piles[src].slice(-1)[0], piles));
    }
    draw();
  };
  firstBoard.addEventListener("click", (ev) => {
    const pile = ev.target.closest("[data-pile], [data-zone]");
    if (pile) choose(pile.dataset.pile || pile.dataset.zone);
  });
  firstBoard.addEventListener("keydown", (ev) => {
    const pile = ev.key === "Enter" && ev.target.closest("[data-pile]");
    if (pile) choose(pile.dataset.pile);
  });
}
