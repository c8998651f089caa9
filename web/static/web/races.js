// The races lobby: quick race, a private race, join by link or code, the open public races.
/* global gettext */
import { api, el, fmt, variantNames } from "./common.js";
import { raceError, raceUrl, startsText, syncClock } from "./racing.js";

const message = document.getElementById("races-message");
const rows = document.getElementById("open-rows");
const names = variantNames();
const REFRESH_MS = 5000;

const show = (err) => message.replaceChildren(...raceError(err));

// Send a POST that gives a race, then open the race's page; the button waits meanwhile.
async function enter(button, path, body) {
  button.disabled = true;
  message.textContent = "";
  try {
    const race = await api("POST", path, body);
    location.href = raceUrl(race.code);
  } catch (err) {
    button.disabled = false;
    show(err);
  }
}

for (const btn of document.querySelectorAll("[data-quick]")) {
  btn.addEventListener("click", () => enter(btn, "/api/v1/races/quick/", { variant: btn.dataset.variant }));
}

const createForm = document.getElementById("create-form");
createForm.addEventListener("submit", (ev) => {
  ev.preventDefault();
  enter(createForm.querySelector("button"), "/api/v1/races/", { variant: createForm.variant.value });
});

// A race's link (from anywhere: /races/<code>/ is all that counts) or its bare code.
function codeOf(text) {
  const t = text.trim();
  const m = t.match(/\/races\/([A-Za-z0-9_-]+)\/?/);
  if (m) return m[1];
  return /^[A-Za-z0-9_-]+$/.test(t) ? t : null;
}

const joinForm = document.getElementById("join-form");
joinForm.addEventListener("submit", (ev) => {
  ev.preventDefault();
  const code = codeOf(joinForm.code.value);
  if (!code) {
    message.textContent = gettext("That is neither a race's link nor its code.");
    joinForm.code.focus();
    return;
  }
  // The race's page shows it, and offers to join it while it is open.
  location.href = raceUrl(code);
});

function row(race) {
  const name = names[race.variant]?.name || race.variant;
  const n = race.players.length;
  return el(
    "tr",
    { dataset: { code: race.code } },
    el("th", { scope: "row" }, name),
    el("td", { class: "num" }, fmt(gettext("%(n)s of %(max)s"), { n, max: race.max_players })),
    el("td", {}, startsText(race)),
    el(
      "td",
      {},
      el(
        "button",
        {
          type: "button",
          class: "button",
          "aria-label": fmt(gettext("Join the %(variant)s race of %(players)s"), {
            variant: name,
            players: race.players.map((p) => p.username).join(", "),
          }),
          onclick: (ev) => joinOpen(ev.currentTarget, race.code),
          disabled: !document.getElementById("races").dataset.me,
        },
        gettext("Join"),
      ),
    ),
  );
}

async function joinOpen(button, code) {
  await enter(button, `/api/v1/races/${encodeURIComponent(code)}/join/`);
}

// The list is read again every few seconds; a focused Join button keeps its focus.
async function refresh() {
  try {
    const races = await api("GET", "/api/v1/races/"); // bounded: not paged
    races.forEach(syncClock);
    const focused = document.activeElement?.closest("#open-rows tr")?.dataset.code;
    rows.replaceChildren(...races.map(row));
    if (focused) rows.querySelector(`tr[data-code="${CSS.escape(focused)}"] button`)?.focus();
    document.getElementById("open-empty").hidden = races.length > 0;
    document.getElementById("open-races").hidden = races.length === 0;
  } catch (err) {
    show(err);
  }
}
refresh();
setInterval(() => {
  if (document.visibilityState === "visible") refresh();
}, REFRESH_MS);
