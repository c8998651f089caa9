// Home: start or resume a daily, start a practice game; a first visit sees today's
// practice deal and plays it without an account.
import { fitOnResize, renderBoard } from "./board.js";
import { errorText, jsonScript, startGame } from "./common.js";

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

const firstBoard = document.getElementById("first-board");
if (firstBoard) {
  const deal = jsonScript("first-deal");
  const { piles, stock } = deal.position;
  renderBoard(firstBoard, { family: deal.variant.family, piles, stock, interactive: false });
  fitOnResize(firstBoard);
  const play = document.getElementById("first-play");
  play.addEventListener("click", () =>
    startGame(play, "/api/v1/games/", { variant: play.dataset.variant, seed: play.dataset.seed }, show),
  );
}
