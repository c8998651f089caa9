// A day's board: pages over REST, new results live over the daily WebSocket.
/* global gettext, ngettext, interpolate */
import { ReconnectingSocket, api, dateTime, duration, el, errorText } from "./common.js";

const root = document.getElementById("day-board");
const variant = root.dataset.variant;
const day = root.dataset.day;
const over = root.dataset.over === "1";
const me = root.dataset.me;
const rowsEl = document.getElementById("board-rows");
const moreBtn = document.getElementById("board-more");
const message = document.getElementById("board-message");
const base = `/api/v1/daily/${variant}/${day}/board/`;

const PAGE = 50;
let lines = []; // shown lines in rank order
let next = null; // the next page's link (every list pages the same way: follow `next`)
let total = 0;
let pages = 0; // pages loaded; the socket's board replaces the first page only

function resultText(line) {
  return line.won
    ? gettext("won")
    : interpolate(ngettext("%(n)s card home", "%(n)s cards home", line.cards_home), { n: line.cards_home }, true);
}

function row(line, fresh = false) {
  const classes = [];
  if (me && line.player === me) classes.push("me");
  if (fresh) classes.push("fresh");
  return el(
    "tr",
    { class: classes.join(" "), dataset: { resultId: line.result_id } },
    el("td", { class: "num" }, String(line.rank)),
    el("td", {}, el("a", { href: `/players/${encodeURIComponent(line.player)}/` }, line.player)),
    el("td", {}, resultText(line)),
    el("td", { class: "num" }, String(line.moves)),
    el("td", { class: "num" }, duration(line.time_ms)),
    el("td", {}, dateTime(line.finished_at)),
    el(
      "td",
      {},
      over
        ? el(
            "a",
            {
              href: `/leaderboards/${variant}/${day}/replay/${line.result_id}/`,
              "aria-label": interpolate(gettext("Replay the game of %(player)s"), { player: line.player }, true),
            },
            gettext("Replay"),
          )
        : "",
    ),
  );
}

function draw(freshId) {
  rowsEl.replaceChildren(...lines.map((l) => row(l, l.result_id === freshId)));
  document.getElementById("board-empty").hidden = lines.length > 0;
  moreBtn.hidden = !next;
  document.getElementById("board-total").textContent = interpolate(
    ngettext("%(n)s player on this board.", "%(n)s players on this board.", total),
    { n: total },
    true,
  );
}

function drawAround(data) {
  const box = document.getElementById("my-place");
  if (!data.me) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  document.getElementById("around-rows").replaceChildren(...data.around.map((l) => row(l)));
}

// The first page, or the page at `link` (a page's `next`).
async function load(link) {
  try {
    const data = await api("GET", link || base + `?limit=${PAGE}`);
    if (link) {
      lines = lines.concat(data.results);
      pages += 1;
      next = data.next;
      total = data.total;
      draw();
    } else {
      firstPage(data);
    }
  } catch (err) {
    message.textContent = errorText(err);
  }
}

function firstPage(data) {
  if (pages > 1) {
    total = data.total;
  } else {
    lines = data.results;
    next = data.next;
    total = data.total;
    pages = 1;
  }
  draw();
  drawAround(data);
}

// A new line from the socket: put it in its place; the lines below it move down one.
function insert(line) {
  lines = lines.filter((l) => l.result_id !== line.result_id);
  const last = lines.length ? lines[lines.length - 1].rank : 0;
  total += 1;
  if (next && line.rank > last) {
    draw();
    return;
  }
  for (const l of lines) if (l.rank >= line.rank) l.rank += 1;
  const at = lines.findIndex((l) => l.rank > line.rank);
  if (at < 0) lines.push(line);
  else lines.splice(at, 0, line);
  draw(line.result_id);
  if (me && line.player === me) load();
}

moreBtn.addEventListener("click", () => load(next));

const liveEl = document.getElementById("live-state");
function live(state) {
  liveEl.dataset.state = state;
  liveEl.textContent = state === "live" ? gettext("Live updates on.") : "";
}

load();
if (!over) {
  // On (re)connect the socket sends the board's first page ("board"), so nothing that
  // happened while it was down is missed; then one "board.result" per new result.
  new ReconnectingSocket(`/ws/v1/daily/${variant}/${day}/?limit=${PAGE}`, {
    onOpen: () => live("live"),
    onClose: () => live("offline"),
    onMessage: (msg) => {
      if (msg.type === "board.result" && msg.result) insert(msg.result);
      // The socket's board has no page links: read the first page again over REST.
      else if (msg.type === "board" && msg.board) load();
    },
  });
}
