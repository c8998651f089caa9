// Home: start or resume a daily, start a practice game.
import { api, errorText } from "./common.js";

const message = document.getElementById("home-message");

for (const btn of document.querySelectorAll("[data-daily-play]")) {
  btn.addEventListener("click", async () => {
    btn.disabled = true;
    try {
      const game = await api("POST", `/api/v1/daily/${btn.dataset.variant}/${btn.dataset.date}/play/`);
      location.href = `/play/${game.id}/`;
    } catch (err) {
      btn.disabled = false;
      message.textContent = errorText(err);
    }
  });
}

const form = document.getElementById("practice-form");
if (form) {
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { variant: form.variant.value };
    const seed = form.seed.value.trim();
    if (seed) body.seed = seed; // a decimal string: seeds go up to 2**64
    const btn = form.querySelector("button");
    btn.disabled = true;
    try {
      const game = await api("POST", "/api/v1/games/", body);
      location.href = `/play/${game.id}/`;
    } catch (err) {
      btn.disabled = false;
      message.textContent = errorText(err);
    }
  });
}
