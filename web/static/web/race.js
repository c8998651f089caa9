// A race's page: the roster and everybody's progress, the countdown and the time left
// from the server's clock, news in a live region, the standings and the rematch.
// The player's own board is the play page's game section (play.js), held inert
// before the start and after the time is up; moves go through the game's own socket.
/* global gettext, ngettext */
import { ReconnectingSocket, api, duration, el, fmt, jsonScript, statusText } from "./common.js";
import { msUntil, raceError, raceUrl, syncClock } from "./racing.js";

const root = document.getElementById("race");
const code = root.dataset.code;
const me = root.dataset.me;
const cards = Number(root.dataset.cards);
const game = document.getElementById("game");
const newsEl = document.getElementById("race-news");
const messageEl = document.getElementById("race-message");
const clockEl = document.getElementById("race-clock");
const phaseEl = document.getElementById("race-phase");
const overlay = document.getElementById("race-overlay"); // over the board, before the start
const NEWS_SHOWN = 6;
const FINISHED = ["won", "lost", "resigned", "move_limit", "expired"];

let race = jsonScript("initial-race");
syncClock(race);
const known = new Map(race.players.map((p) => [p.username, p.status])); // what was announced
let phase = null; // what the clock last said: open | countdown | running | over | finished
let reloading = false;

const mine = () => race.players.some((p) => p.username === me);

function news(text) {
  newsEl.append(el("p", {}, text));
  while (newsEl.children.length > NEWS_SHOWN) newsEl.firstElementChild.remove();
}

function say(err) {
  messageEl.replaceChildren(...(err ? raceError(err) : []));
}

// -- what a player has done, in words ---------------------------------------------------------
function cardsText(p) {
  return fmt(gettext("%(n)s of %(max)s cards home"), { n: p.cards_home, max: cards });
}

function movesText(n) {
  return fmt(ngettext("%(n)s move", "%(n)s moves", n), { n });
}

function progressStatus(status) {
  return status === "waiting" ? gettext("Waiting") : statusText(status, "race");
}

// An opponent has finished: the news says how.
function finishedText(p) {
  const who = p.username;
  if (p.status === "won") return fmt(gettext("%(who)s has won, in %(time)s."), { who, time: duration(p.time_ms) });
  if (p.status === "resigned") return fmt(gettext("%(who)s resigned: %(cards)s."), { who, cards: cardsText(p) });
  return fmt(gettext("%(who)s has finished: %(cards)s."), { who, cards: cardsText(p) });
}

// -- the players' progress ----------------------------------------------------------------------
function playerItem(p) {
  // Everyone plays from the start on; the server says so with their first move.
  if (p.status === "waiting" && ["running", "over"].includes(phase)) p = { ...p, status: "playing" };
  const you = p.username === me;
  const label = you ? fmt(gettext("%(who)s (you)"), { who: p.username }) : p.username;
  const facts = [`${p.cards_home}/${cards}`, movesText(p.moves), progressStatus(p.status)];
  if (p.status === "won" && p.time_ms !== null) facts.push(duration(p.time_ms));
  const id = `racer-${p.username.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return el(
    "li",
    { class: `racer status-${p.status}${you ? " me" : ""}`, dataset: { player: p.username } },
    el("span", { class: "racer-name", id }, label),
    el("progress", {
      max: String(cards),
      value: String(p.cards_home),
      "aria-labelledby": id,
      "aria-valuetext": cardsText(p),
    }),
    el("span", { class: "racer-facts" }, facts.join(" · ")),
  );
}

function drawPlayers() {
  document.getElementById("race-players").replaceChildren(...race.players.map(playerItem));
}

// Joins, departures and finishes since the last news.
function announce() {
  const now = new Map(race.players.map((p) => [p.username, p.status]));
  for (const p of race.players) {
    const before = known.get(p.username);
    if (before === undefined && p.username !== me) news(fmt(gettext("%(who)s joined the race."), { who: p.username }));
    else if (before !== undefined && !FINISHED.includes(before) && FINISHED.includes(p.status) && p.username !== me) {
      news(finishedText(p));
    }
  }
  for (const who of known.keys()) {
    if (!now.has(who) && who !== me) news(fmt(gettext("%(who)s left the race."), { who }));
  }
  known.clear();
  for (const [k, v] of now) known.set(k, v);
}

// -- the standings ------------------------------------------------------------------------------
function ratingText(r) {
  if (!r || r.before === null || r.after === null) return "–";
  const change = Math.round(r.after) - Math.round(r.before);
  return `${Math.round(r.after)} (${change >= 0 ? "+" : "−"}${Math.abs(change)})`;
}

function standingRow(s) {
  const result = s.status === "won" ? gettext("won") : progressStatus(s.status);
  return el(
    "tr",
    { class: s.username === me ? "me" : "" },
    el("td", { class: "num" }, String(s.place)),
    el("td", {}, el("a", { href: `/players/${encodeURIComponent(s.username)}/` }, s.username)),
    el("td", {}, result),
    el("td", { class: "num" }, `${s.cards_home} / ${cards}`),
    el("td", { class: "num" }, String(s.moves)),
    el("td", { class: "num" }, s.time_ms === null ? "–" : duration(s.time_ms)),
    el("td", { class: "num" }, ratingText(s.rating)),
    el(
      "td",
      {},
      s.status === "waiting"
        ? ""
        : el(
            "a",
            {
              href: `/races/${encodeURIComponent(code)}/replay/${encodeURIComponent(s.username)}/`,
              "aria-label": fmt(gettext("Replay the game of %(player)s"), { player: s.username }),
            },
            gettext("Replay"),
          ),
    ),
  );
}

function drawStandings() {
  const box = document.getElementById("race-standings");
  const rows = race.standings || [];
  box.hidden = !(race.status === "finished" && rows.length);
  document.getElementById("standings-rows").replaceChildren(...rows.map(standingRow));
}

// -- the buttons -----------------------------------------------------------------------------------
function drawActions() {
  const open = ["open", "countdown"].includes(currentPhase());
  const set = (id, show) => {
    const node = document.getElementById(id);
    if (node) node.hidden = !show;
  };
  const full = race.players.length >= race.max_players;
  set("btn-race-join", me && open && !mine() && !full);
  set("btn-race-leave", me && open && mine());
  set(
    "btn-race-start",
    me && race.kind === "private" && race.status === "open" && race.creator === me,
  );
  const start = document.getElementById("btn-race-start");
  if (start) start.disabled = race.players.length < race.min_players;
  // The first player to ask for a rematch creates it; the others join it the same way.
  const rematch = document.getElementById("btn-race-rematch");
  set("btn-race-rematch", me && race.status === "finished" && mine());
  if (rematch) rematch.textContent = race.rematch ? gettext("Join the rematch") : gettext("Rematch");
  const link = document.getElementById("race-rematch-link");
  if (link) {
    link.hidden = !race.rematch || mine();
    if (race.rematch) link.href = raceUrl(race.rematch);
  }
  set("race-share", open);
}

async function post(button, action) {
  button.disabled = true;
  say(null);
  try {
    const answer = await api("POST", `/api/v1/races/${encodeURIComponent(code)}/${action}/`);
    if (answer && answer.code && answer.code !== code) {
      location.href = raceUrl(answer.code); // a rematch: its own page
      return;
    }
    receive(answer);
    if (action === "leave") location.href = "/races/";
  } catch (err) {
    if (action === "rematch" && err.code === "already_racing" && race.rematch) {
      location.href = raceUrl(race.rematch); // in the rematch already
      return;
    }
    say(err);
  } finally {
    button.disabled = false;
    drawActions();
  }
}

for (const [id, action] of [
  ["btn-race-join", "join"],
  ["btn-race-leave", "leave"],
  ["btn-race-start", "start"],
  ["btn-race-rematch", "rematch"],
]) {
  const button = document.getElementById(id);
  if (button) button.addEventListener("click", () => post(button, action));
}

document.getElementById("btn-race-copy").addEventListener("click", async () => {
  const input = document.getElementById("race-link");
  try {
    await navigator.clipboard.writeText(input.value);
    messageEl.textContent = gettext("Copied.");
  } catch (err) {
    input.select(); // no clipboard (an insecure page, or refused): copy by hand
    messageEl.textContent = gettext("Select and copy the text.");
  }
});

// -- the clock -------------------------------------------------------------------------------------
// The phase and the time shown come from the race's times and the server's clock, so every
// player's countdown ends at the same moment whatever their own clock says.
function currentPhase() {
  if (race.status === "finished") return "finished";
  const toStart = msUntil(race.starts_at);
  if (toStart === null) return "open";
  if (toStart > 0) return "countdown";
  return msUntil(race.ends_at) > 0 ? "running" : "over";
}

let askedAfterEnd = 0;
function tick() {
  const now = currentPhase();
  if (now !== phase) enter(now, phase);
  phase = now;
  root.dataset.phase = now;
  if (now === "countdown") {
    const left = msUntil(race.starts_at);
    phaseEl.textContent = gettext("Starts in");
    clockEl.textContent = String(Math.ceil(left / 1000));
    if (overlay) overlay.textContent = clockEl.textContent;
  } else if (now === "running") {
    const left = msUntil(race.ends_at);
    phaseEl.textContent = gettext("Time left");
    clockEl.textContent = duration(left + 999);
    if (left <= 60000 && !root.dataset.lastMinute) {
      root.dataset.lastMinute = "1";
      news(gettext("One minute left."));
    }
  } else {
    phaseEl.textContent = {
      open: gettext("Waiting for players"),
      over: gettext("Time is up"),
      finished: gettext("The race is over"),
    }[now];
    clockEl.textContent = "";
    // The server ends the race at its time limit; until it says so, ask now and then.
    if (now === "over" && Date.now() - askedAfterEnd > 2000) {
      askedAfterEnd = Date.now();
      refresh();
    }
  }
}

// The board and its buttons take moves only while the race runs.
function hold(held) {
  if (!game) return;
  for (const node of game.querySelectorAll("#board, .game-controls")) node.inert = held;
}

function enter(now, before) {
  hold(now !== "running");
  phase = now;
  drawPlayers();
  drawActions();
  const mine = (race.standings || []).find((s) => s.username === me);
  if (now === "finished") showPlace(mine, before !== null);
  if (before === null) return; // the page just opened: no news of the past
  if (now === "countdown") {
    news(fmt(gettext("The race starts in %(s)s seconds."), { s: Math.ceil(msUntil(race.starts_at) / 1000) }));
  } else if (now === "running") {
    news(gettext("Go!"));
  } else if (now === "over") {
    news(gettext("Time is up."));
  } else if (now === "finished") {
    const mineRow = mine;
    news(
      mineRow
        ? fmt(gettext("The race is over: you are in place %(place)s of %(n)s."), { place: mineRow.place, n: race.standings.length })
        : gettext("The race is over."),
    );
  }
}

// The player's place in the finished race, in the game's result; `open`: shown beside the
// board now (the race has just ended).
function showPlace(mineRow, open) {
  const row = document.getElementById("end-place-row");
  if (!row || !mineRow) return;
  document.getElementById("end-place").textContent = fmt(gettext("%(rank)s of %(total)s"), {
    rank: mineRow.place,
    total: race.standings.length,
  });
  row.hidden = false;
  const dialog = document.getElementById("end-dialog");
  if (open && dialog && !dialog.open) dialog.show();
}

// -- news from the server -----------------------------------------------------------------------
function receive(next) {
  if (!next || next.code !== code) return;
  race = next;
  syncClock(race);
  root.dataset.status = race.status;
  draw();
  // The countdown deals the player's game (and a race back to waiting takes it away):
  // the page is loaded again to mount the board of the game the player has now.
  const mounted = game ? Number(game.dataset.gameId) : null;
  if ((race.you ? race.you.game : mounted) !== mounted && !reloading) {
    reloading = true;
    location.reload();
  }
}

function progress(p) {
  const i = race.players.findIndex((x) => x.username === p.username);
  if (i < 0) race.players.push(p);
  else race.players[i] = p;
  draw();
}

function draw() {
  announce();
  drawPlayers();
  drawStandings();
  drawActions();
  tick();
}

async function refresh() {
  try {
    receive(await api("GET", `/api/v1/races/${encodeURIComponent(code)}/`));
  } catch (err) {
    say(err);
  }
}

const socket = new ReconnectingSocket(`/ws/v1/races/${encodeURIComponent(code)}/`, {
  onMessage: (msg) => {
    if (msg.type === "race.state" || msg.type === "race.finished") receive(msg.race);
    else if (msg.type === "race.progress" && msg.player) progress(msg.player);
    else if (msg.type === "race.rematch" && msg.code) {
      race.rematch = msg.code;
      news(gettext("A rematch is open."));
      drawActions();
    }
  },
});
window.patienceRace = { get race() { return race; }, socket }; // for the browser tests

draw();
setInterval(tick, 200);
// Above the board on a phone, the race's panel changes the room the board has: the
// board is fitted again (board.js fits it on every resize) when the panel's size changes.
if (game) {
  new ResizeObserver(() => window.dispatchEvent(new Event("resize"))).observe(
    document.querySelector(".race-panel"),
  );
}
