// Every page: the menu on phones, the log-out button and live countdowns.
/* global gettext */
import { api, duration, errorText } from "./common.js";

// The menu button (phones, play pages: the cards get the height): opens and closes the nav.
const menu = document.querySelector(".nav-toggle");
menu?.addEventListener("click", () => {
  const open = menu.getAttribute("aria-expanded") !== "true";
  menu.setAttribute("aria-expanded", String(open));
  menu.closest(".site-header").classList.toggle("nav-open", open);
});

for (const btn of document.querySelectorAll("[data-logout]")) {
  btn.addEventListener("click", async () => {
    btn.disabled = true;
    try {
      await api("POST", "/api/v1/auth/logout/");
      location.href = "/";
    } catch (err) {
      btn.disabled = false;
      alert(errorText(err));
    }
  });
}

// <span data-countdown="seconds">: counts down to zero, then reloads the page once.
const started = performance.now();
const countdowns = [...document.querySelectorAll("[data-countdown]")];
function tickCountdowns() {
  const gone = (performance.now() - started) / 1000;
  for (const node of countdowns) {
    const left = Math.max(0, Number(node.dataset.countdown) - gone);
    node.textContent = duration(left * 1000);
    if (left <= 0 && !node.dataset.done) {
      node.dataset.done = "1";
      node.textContent = gettext("a new day has begun");
      setTimeout(() => location.reload(), 3000);
    }
  }
}
if (countdowns.length) {
  tickCountdowns();
  setInterval(tickCountdowns, 1000);
}
