// A finished game's analysis by the solver (GET /api/v1/games/{id}/analysis/): a strip of
// the game's moves coloured won / lost / unknown, the fatal move marked, and "Show the
// winning line", which plays the solver's line on the board with the usual motion. On a
// finished day's board: the share of its games still winnable after each move, and the
// most common fatal moves. Mounted by web/_analysis.html and web/_day_analysis.html.
//
// While the analysis is queued or running the page listens on the game's socket
// (/ws/v1/games/{id}/) for `analysis.ready` and then reads it once. It polls every few
// seconds only while that socket is down: refused (not the viewer's own game, as a
// daily's or a race's replay seen by someone else), or closed and waiting to reconnect.
// While it listens, one slow look a minute remains, for an event that cannot come (a
// server whose channel layer is its own process's, with the worker in another).
/* global gettext, ngettext */
import { renderBoard } from "./board.js";
import { moveWords } from "./cards.js";
import { api, el, errorText, fmt, lang, wsUrl } from "./common.js";
import { snapshot, slide, still } from "./motion.js";

const STEP_MS = 700; // between two moves of the winning line
const POLL_MS = 3000; // while queued or running and the socket is down
const LISTEN_POLL_MS = 60000; // while the socket listens
const MAX_POLLS = 100; // about five minutes of polls
const REFUSED = [4401, 4404, 4429]; // the socket's close codes that a retry would not change

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pilesOf = (pos) => ({ ...pos.piles });
const verdictText = {
  won: () => gettext("still winnable"),
  lost: () => gettext("lost"),
  unknown: () => gettext("unknown (the solver's budget ran out)"),
};

// -- one game ---------------------------------------------------------------------------

// The game's socket while its analysis is pending. `wait()` resolves on `analysis.ready`,
// on the socket's first frame (it listens from then on, so the page reads once more: an
// analysis done before it listened is not missed) or when it closes; else after a poll's
// wait (POLL_MS while the socket is down, LISTEN_POLL_MS while it listens).
class ReadyWatch {
  constructor(gameId) {
    this.gameId = Number(gameId);
    this.listening = false;
    this.refused = false;
    this.stopped = false;
    this.delay = 1000;
    this.ws = null;
    this.wake = null;
    this.woken = false;
    this.connect();
  }

  connect() {
    if (this.stopped || this.refused) return;
    let ws;
    try {
      ws = new WebSocket(wsUrl(`/ws/v1/games/${this.gameId}/`));
    } catch (e) {
      this.refused = true;
      return;
    }
    this.ws = ws;
    ws.addEventListener("message", (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      if (!this.listening) {
        this.listening = true;
        this.delay = 1000;
        this.poke();
      } else if (msg.type === "analysis.ready" && msg.game_id === this.gameId) this.poke();
    });
    ws.addEventListener("close", (ev) => {
      this.listening = false;
      this.ws = null;
      if (REFUSED.includes(ev.code)) this.refused = true;
      this.poke();
      if (this.stopped || this.refused) return;
      setTimeout(() => this.connect(), this.delay * (0.8 + Math.random() * 0.4));
      this.delay = Math.min(this.delay * 2, 30000);
    });
  }

  poke() {
    if (this.wake) this.wake();
    else this.woken = true; // while the page reads: the next wait ends at once
  }

  // True when woken by the socket, false after a poll's wait.
  wait() {
    return new Promise((resolve) => {
      if (this.woken) {
        this.woken = false;
        resolve(true);
        return;
      }
      const timer = setTimeout(() => done(false), this.listening ? LISTEN_POLL_MS : POLL_MS);
      const done = (woken) => {
        clearTimeout(timer);
        this.wake = null;
        resolve(woken);
      };
      this.wake = () => done(true);
    });
  }

  stop() {
    this.stopped = true;
    this.wake = null;
    if (this.ws) this.ws.close();
  }
}

function summaryText(a) {
  const played = a.played;
  switch (a.summary) {
    case "won":
      return a.par
        ? fmt(gettext("Won in %(played)s moves; the solver's par is %(par)s."), { played, par: a.par })
        : fmt(ngettext("Won in %(played)s move.", "Won in %(played)s moves.", played), { played });
    case "still_winnable":
      return gettext("The game could still have been won when it ended.");
    case "never_winnable":
      return gettext("This deal could not be won from the start, whatever was played.");
    case "fatal": {
      const before = a.winning_line ? pilesOf(a.winning_line.positions[0]) : null;
      const words = before ? moveWords(a.fatal.notation, before) : a.fatal.notation;
      return fmt(gettext("Move %(move)s (%(words)s) lost the game: before it, the game could still be won."), {
        move: a.fatal.move,
        words,
      });
    }
    case "range":
      return fmt(
        gettext("The game was lost between move %(first)s and move %(last)s: the solver could not decide the moves between."),
        { first: (a.last_won ?? -1) + 1, last: a.first_lost },
      );
    default:
      return gettext("The solver could not decide where this game was lost.");
  }
}

function strip(list, a) {
  const cells = a.verdicts.map((verdict, i) => {
    const move = i === 0 ? gettext("The deal") : fmt(gettext("Move %(k)s: %(move)s"), { k: i, move: a.moves[i - 1] });
    const fatal = a.fatal && a.fatal.move === i;
    const li = el("li", {
      class: `v-${verdict}${fatal ? " fatal" : ""}`,
      title: `${move} · ${verdictText[verdict]()}`,
      "data-step": String(a.steps[i]),
    });
    li.append(el("span", { class: "visually-hidden" }, `${move}: ${verdictText[verdict]()}${fatal ? ` (${gettext("the fatal move")})` : ""}`));
    return li;
  });
  list.replaceChildren(...cells);
}

function mountGame(box) {
  const board = document.getElementById("board");
  const family = box.dataset.family;
  const noAces = box.dataset.variant === "royal-parade";
  const summary = box.querySelector(".analysis-summary");
  const list = box.querySelector(".analysis-strip");
  const play = box.querySelector(".analysis-play");
  const back = box.querySelector(".analysis-back");
  const status = box.querySelector(".analysis-line-status");
  let report = null;
  let saved = null; // the board as it was before the line played
  let run = 0; // the line playing now (a new click or "back" ends the one before)

  async function load() {
    let gameId = box.dataset.analysisGame;
    let watch = null;
    try {
      if (!gameId && box.dataset.replayUrl) gameId = (await api("GET", box.dataset.replayUrl)).game_id;
      for (let polls = 0; !report; ) {
        const data = await api("GET", `/api/v1/games/${gameId}/analysis/`);
        box.hidden = false;
        if (data.state === "done") {
          report = data.analysis;
          break;
        }
        summary.textContent = gettext("The solver is analysing this game…");
        if (!watch) watch = new ReadyWatch(gameId);
        if (!(await watch.wait()) && ++polls >= MAX_POLLS) return; // a reload asks again
      }
    } catch (err) {
      if (["day_not_over", "race_not_finished", "game_not_finished", "not_found"].includes(err.code)) return;
      box.hidden = false;
      summary.textContent = errorText(err);
      return;
    } finally {
      if (watch) watch.stop();
    }
    summary.textContent = summaryText(report);
    strip(list, report);
    list.hidden = false;
    box.querySelector(".analysis-legend").hidden = false;
    box.querySelector(".analysis-legend .fatal").hidden = !report.fatal;
    play.hidden = !report.winning_line || report.summary === "won";
  }

  function draw(pos, marks = []) {
    const before = snapshot(board);
    renderBoard(board, { family, piles: pilesOf(pos), stock: pos.stock, interactive: false, noAces, marks });
    slide(board, before);
  }

  async function playLine() {
    const line = report.winning_line;
    const mine = ++run;
    if (!saved) saved = [...board.childNodes].map((node) => node.cloneNode(true));
    back.hidden = false;
    play.disabled = true;
    draw(line.positions[0]);
    status.textContent = fmt(gettext("The position after move %(k)s, where the game could still be won."), { k: line.start });
    for (let i = 0; i < line.moves.length; i++) {
      await sleep(still() ? STEP_MS / 2 : STEP_MS);
      if (mine !== run) return;
      draw(line.positions[i + 1]);
      status.textContent = fmt(gettext("Winning line, move %(i)s of %(n)s: %(move)s"), {
        i: i + 1,
        n: line.moves.length,
        move: moveWords(line.moves[i], pilesOf(line.positions[i])),
      });
    }
    status.textContent = gettext("The winning line is played out: every card is home.");
    play.disabled = false;
  }

  play.addEventListener("click", () => playLine());
  back.addEventListener("click", () => {
    run++;
    if (saved) board.replaceChildren(...saved.map((node) => node.cloneNode(true)));
    back.hidden = true;
    play.disabled = false;
    status.textContent = "";
  });

  // The play page: analysed once the game has ended (its finished banner shows).
  const banner = document.getElementById("finished-banner");
  if (!banner || box.dataset.replayUrl) return load();
  const ended = () => !banner.hidden;
  if (ended()) return load();
  const watch = new MutationObserver(() => {
    if (!ended()) return;
    watch.disconnect();
    load();
  });
  watch.observe(banner, { attributes: true, attributeFilter: ["hidden"] });
}

// -- a day's board ----------------------------------------------------------------------

async function mountDay(box) {
  let data;
  try {
    data = await api("GET", box.dataset.url);
  } catch (err) {
    if (err.code !== "day_not_over") box.querySelector(".analysis-summary").textContent = errorText(err);
    return;
  }
  box.hidden = false;
  const pct = new Intl.NumberFormat(lang(), { style: "percent" });
  const summary = box.querySelector(".analysis-summary");
  summary.textContent = data.pending
    ? fmt(gettext("%(done)s of %(all)s games analysed so far."), { done: data.analysed, all: data.analysed + data.pending })
    : fmt(ngettext("%(done)s game analysed.", "%(done)s games analysed.", data.analysed), { done: data.analysed });
  const bars = box.querySelector(".winnable-bars");
  bars.replaceChildren(
    ...data.after_move.map((c, k) => {
      const all = c.won + c.lost + c.unknown || 1;
      const text = fmt(gettext("After move %(k)s: %(won)s still winnable, %(lost)s lost, %(unknown)s unknown"), {
        k,
        won: pct.format(c.won / all),
        lost: pct.format(c.lost / all),
        unknown: pct.format(c.unknown / all),
      });
      const bar = el("li", { title: text, style: `--won:${c.won / all};--unknown:${c.unknown / all}` });
      bar.append(el("span", { class: "visually-hidden" }, text));
      return bar;
    }),
  );
  const fatal = box.querySelector(".fatal-moves");
  fatal.replaceChildren(
    ...data.fatal_moves.map((f) =>
      el("li", {}, fmt(ngettext("Move %(move)s, %(notation)s: %(n)s game", "Move %(move)s, %(notation)s: %(n)s games", f.games), { move: f.move, notation: f.notation, n: f.games })),
    ),
  );
  box.querySelector(".fatal-none").hidden = data.fatal_moves.length > 0;
}

for (const box of document.querySelectorAll("[data-analysis=game]")) mountGame(box);
for (const box of document.querySelectorAll("[data-analysis=day]")) mountDay(box);
