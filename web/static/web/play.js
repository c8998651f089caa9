// The play page: draws the game, takes clicks, drags, double-clicks and keys, and
// sends every move to the server (the server alone decides what is legal).
/* global gettext, ngettext, interpolate */
import { fitOnResize, renderBoard } from "./board.js";
import { cardName, foundationFor, moveWords, pileName } from "./cards.js";
import {
  api,
  dateText,
  duration,
  errorText,
  fmt,
  jsonScript,
  lang,
  startGame,
  statusText,
  variantNames,
} from "./common.js";
import { GameClient } from "./game.js";
import { celebrate, dealIn, slide, snapshot, still } from "./motion.js";
import { predictor } from "./predict.js";
import { play as playSound } from "./sound.js";

const root = document.getElementById("game");
const boardEl = document.getElementById("board");
fitOnResize(boardEl);
const family = root.dataset.family;
const variant = root.dataset.variant;
const HOME = family === "bristol" ? "f" : "a";
const KEEP_AFTER = 3; // moves after which a guest is offered to keep the game
const SETTINGS_KEY = "patience.settings";

// -- settings (localStorage) ---------------------------------------------------------------
const settings = Object.assign(
  // Key hints by default only where there is likely a keyboard (a fine pointer).
  // Safe cards go home by default; sounds are off until asked for.
  { autoHome: true, instant: true, sounds: false, keyHints: window.matchMedia("(pointer: fine)").matches },
  (() => {
    try {
      const saved = JSON.parse(localStorage.getItem(SETTINGS_KEY)) || {};
      // The setting was "Aces automatically" before safe moves home took its place.
      if (saved.autoHome === undefined && saved.autoAces !== undefined) saved.autoHome = saved.autoAces;
      delete saved.autoAces;
      return saved;
    } catch (e) {
      return {};
    }
  })(),
);
const sound = (name) => playSound(name, settings.sounds);
function saveSettings() {
  try {
    localStorage.setItem(SETTINGS_KEY, JSON.stringify(settings));
  } catch (e) {
    /* private mode: settings last for this page only */
  }
}

// -- keys ------------------------------------------------------------------------------------
// Physical keys (KeyboardEvent.code), so the scheme is the same on QWERTY and QWERTZ.
const KEYMAP = {};
if (family === "bristol") {
  for (let i = 1; i <= 8; i++) {
    KEYMAP["Digit" + i] = "t" + i;
    KEYMAP["Numpad" + i] = "t" + i;
  }
  KEYMAP.KeyQ = "r1";
  KEYMAP.KeyW = "r2";
  KEYMAP.KeyE = "r3";
  KEYMAP.KeyF = "f";
  KEYMAP.KeyD = "deal";
  KEYMAP.KeyU = "undo";
} else {
  for (let i = 1; i <= 8; i++) {
    KEYMAP["Digit" + i] = "r" + i;
    KEYMAP["Numpad" + i] = "r" + i;
  }
  const rows = [
    ["KeyQ", "KeyW", "KeyE", "KeyR", "KeyT", "KeyY", "KeyU", "KeyI"],
    ["KeyA", "KeyS", "KeyD", "KeyF", "KeyG", "KeyH", "KeyJ", "KeyK"],
    ["KeyZ", "KeyX", "KeyC", "KeyV", "KeyB", "KeyN", "KeyM", "Comma"],
  ];
  rows.forEach((row, r) => row.forEach((code, c) => (KEYMAP[code] = "g" + (r * 8 + c + 1))));
  KEYMAP.KeyP = "a";
}
KEYMAP.Space = "deal";
KEYMAP.Backspace = "undo";

// What the key on each physical position is labelled (QWERTZ swaps Y and Z).
let layout = null;
const keyLabel = (code) => {
  if (layout && layout.get(code)) return layout.get(code).toUpperCase();
  if (code === "Comma") return ",";
  if (document.documentElement.lang === "de") {
    if (code === "KeyY") return "Z";
    if (code === "KeyZ") return "Y";
  }
  return code.replace(/^(Key|Digit)/, "");
};
function hintLabels() {
  const labels = {};
  for (const [code, target] of Object.entries(KEYMAP)) {
    if (code.startsWith("Numpad") || labels[target]) continue;
    if (/^[tgraf]\d*$/.test(target)) labels[target] = keyLabel(code);
  }
  labels.s = gettext("Space");
  return labels;
}
if (navigator.keyboard && navigator.keyboard.getLayoutMap) {
  navigator.keyboard
    .getLayoutMap()
    .then((m) => {
      layout = m;
      draw();
      fillKeyHelp();
    })
    .catch(() => {});
}

// -- state -----------------------------------------------------------------------------------
const ui = { selected: null, targets: new Set(), sources: new Set(), hint: [] };
let receivedAt = performance.now();
let suppressAuto = false;
let finishing = false; // "Finish" was pressed: the page plays the server's finishing line

// Instant moves: a card move the page can work out is drawn at once (`guess`) and sent;
// `pending` holds those not answered yet, each with the ply it was played at and the
// position it should lead to. The server's answer replaces the guess: the same position
// goes on; another one, or a refusal, rolls the board back with a short visible cue.
const guesser = predictor(variant);
let pending = [];
let guess = null;
const view = () => guess || client.state;

function reconcile(state) {
  let answered = null;
  while (pending.length && state.ply > pending[0].ply) answered = pending.shift();
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  if (answered && state.ply === answered.ply + 1 && !same(state.position, answered.position)) {
    return rollBack();
  }
  let s = state;
  for (const p of pending) {
    s = s && guesser.after(s, p.move);
  }
  if (!s) return rollBack();
  guess = pending.length ? s : null;
}

// The server did not take a move the page drew: show its state, and say so (and why).
function rollBack(why = "") {
  pending = [];
  finishing = false; // a refused line is not played on by itself
  guess = null;
  boardEl.classList.remove("rolled-back");
  void boardEl.offsetWidth; // restart the cue
  boardEl.classList.add("rolled-back");
  say(`${gettext("The server did not take that move: the board shows the game as it stands.")} ${why}`.trim());
}
const statusLine = document.getElementById("status-line");
const connEl = document.getElementById("conn");

let wasDown = false;
let over = false; // a ranked daily whose day has ended

// While a move waits for a server that is down (or back but not yet answering it),
// the status line says so whatever else it says.
let connectedLater = false; // "Connected again" once the waiting move is stored
const WAITING = () => gettext("Reconnecting; your move is waiting.");
const SAYS_WAITING = () => [
  WAITING(),
  gettext("The server cannot be reached. Reconnecting; your move is waiting."),
  gettext("Reconnecting; your move is waiting. That click was not sent."),
];
function say(text) {
  const waiting = client && client.inflight && (client.down || connectedLater);
  if (waiting && !SAYS_WAITING().includes(text)) text = `${WAITING()} ${text}`.trim();
  statusLine.textContent = text;
}

// The server cannot be reached: say so, and whether a move waits to be sent.
function sayDown() {
  say(
    client && client.inflight
      ? gettext("The server cannot be reached. Reconnecting; your move is waiting.")
      : gettext("The server cannot be reached. Reconnecting…"),
  );
}

// The connection announces itself while it is built, before `client` is assigned.
let client = null;
client = new GameClient(Number(root.dataset.gameId), jsonScript("initial-state"), {
  onState: (state, before) => {
    receivedAt = performance.now();
    // A race's game shows its deal from the start on: until the server says it has
    // started (the page's clock may be a little ahead), ask again.
    if (!state.position && !boardEl.inert) setTimeout(() => client.resync(), 300);
    // The same position again (a reconnect, a resync): only the clock needs the news.
    const dealt = !before.position && state.position;
    const guessed = !!guess;
    reconcile(state);
    if (state.ply === before.ply && state.status === before.status && !dealt && guessed === !!guess) {
      return tick();
    }
    if (ui.selected && !sourcesOf(view()).has(ui.selected)) ui.selected = null;
    draw({ deal: dealt });
    if (before.status === "playing" && state.status !== "playing") {
      say(""); // what the status line said was about the game in play
      // "You won!" at once; the result comes beside the board once the cards have cascaded.
      document.getElementById("finished-text").textContent = endTitle(state.status) || "";
      if (state.status === "won") {
        sound("win");
        celebrate(boardEl, shownPiles()).then(() => showEnd(true));
      } else showEnd(true);
    }
  },
  onIdle: () => {
    if (connectedLater) {
      connectedLater = false;
      say(gettext("Connected again: your move is stored."));
    }
    controls();
    autoPlay();
  },
  onError: (err) => {
    if (err.code === "day_over") dayOver();
    if (pending.length) {
      rollBack(errorText(err));
      draw();
    } else if (err.code !== "day_over") say(errorText(err));
  },
  onConnection: (c) => {
    connEl.dataset.state = c;
    connEl.textContent = {
      live: gettext("Live"),
      connecting: gettext("Connecting…"),
      offline: gettext("Offline: moves go over HTTP"),
      down: gettext("Reconnecting…"),
    }[c];
    if (c === "down") sayDown();
    else if (wasDown && client && client.inflight) connectedLater = true; // said once stored
    else if (wasDown) say(gettext("Connected again."));
    wasDown = c === "down";
    boardEl.classList.toggle("down", c === "down");
    if (client) draw();
  },
});
window.patienceGame = client; // for the browser tests and the curious
window.patienceGuesser = guesser;

function sourcesOf(state) {
  const set = new Set();
  for (const m of state.legal_moves) {
    const i = m.indexOf("-");
    if (i > 0 && !m.startsWith("deal")) set.add(m.slice(0, i));
  }
  return set;
}

function destinationsOf(src) {
  const out = new Set();
  for (const m of view().legal_moves) {
    if (m.startsWith(src + "-")) {
      const dst = m.slice(src.length + 1);
      out.add(dst);
      if (dst === "f") {
        // Only the foundation the card would land on lights up (any of them takes the click).
        const piles = shownPiles();
        const f = foundationFor(piles[src].slice(-1)[0], piles);
        if (f) out.add(f);
      }
    }
  }
  return out;
}

const legal = (m) => view().legal_moves.includes(m);
// The piles shown: none before a race's start (its game shows no card until then).
const shownPiles = () => (view().position ? view().position.piles : {});
const asDest = (id) => (/^f\d$/.test(id) ? "f" : id);

// -- drawing -----------------------------------------------------------------------------------
// Draw the state; the cards that moved slide there (a new deal flies out of the stock).
// Only the piles whose cards changed are rebuilt (and measured for the motion); a
// selection only toggles classes. `order`: the cards of a line drawn at once, which
// leave one after the other.
function draw({ deal = false, order = [] } = {}) {
  const s = view();
  let before = null;
  ui.sources = s.status === "playing" && !over ? sourcesOf(s) : new Set();
  ui.targets = ui.selected ? destinationsOf(ui.selected) : new Set();
  renderBoard(boardEl, {
    family,
    piles: shownPiles(),
    stock: s.position ? s.position.stock : 0,
    interactive: true,
    keys: hintLabels(),
    keyHints: settings.keyHints,
    ui,
    noAces: variant === "royal-parade",
    marks: ui.hint,
    pending: waitingPile(),
    before: (ids) => {
      if (!deal && (!ids || ids.length)) before = snapshot(boardEl, ids);
    },
  });
  if (deal) dealIn(boardEl);
  else slide(boardEl, before, order);
  document.getElementById("moves").textContent = s.ply;
  // A guest who has played a few moves is offered to keep the game (it is theirs once
  // they register).
  const keep = document.getElementById("keep-game");
  if (keep) keep.hidden = s.ply < KEEP_AFTER || s.status !== "playing";
  document.getElementById("score").textContent = `${s.score} / ${s.max_score}`;
  document.getElementById("btn-deal").querySelector(".count").textContent = s.position ? s.position.stock : "";
  // The stock is empty: Deal gives its place to Finish (which shows when it can play).
  document.getElementById("btn-deal").hidden = !!s.position && !s.position.stock;
  document.getElementById("btn-deal-reverse").hidden = !legal("deal-reverse");
  document.getElementById("btn-finish").hidden = !(s.finish && s.finish.length) || over;
  controls();
  document.getElementById("game-status").textContent = statusText(s.status, s.kind);
  root.dataset.status = s.status;
  document.getElementById("finished-banner").hidden = s.status === "playing";
  // Still shown once the server has ended the game with its day (expired): it offers practice.
  document.getElementById("day-over-banner").hidden =
    !over || !["playing", "expired"].includes(s.status);
  tick();
}

// While the server cannot be reached, the pile where the move that waits for it put its
// card (drawn at once): marked, so the player sees what is not stored yet.
function waitingPile() {
  const f = client && client.down && client.inflight;
  if (!f || f.action.kind !== "move" || !pending.length) return null;
  const dst = f.action.move.split("-")[1];
  if (dst !== "f") return dst;
  const card = pending[0] && client.state.position.piles[f.action.move.split("-")[0]]?.slice(-1)[0];
  return card ? foundationFor(card, client.state.position.piles) : null;
}

// The buttons: Deal and Resign cannot be taken back, so they wait while a request is
// pending or the server is down.
function controls() {
  const s = client.state;
  const hold = client.busy || client.down;
  document.getElementById("btn-deal").disabled = !legal("deal") || hold || over;
  document.getElementById("btn-deal-reverse").disabled = !legal("deal-reverse") || hold || over;
  document.getElementById("btn-undo").disabled = !s.can_undo || client.down || over;
  document.getElementById("btn-resign").disabled = s.status !== "playing" || hold;
  document.getElementById("btn-finish").disabled = finishing || hold;
  const hintBtn = document.getElementById("btn-hint");
  if (hintBtn && !hintPending) hintBtn.disabled = s.status !== "playing" || client.down;
}

function tick() {
  const s = client.state;
  const running = s.status === "playing" && !boardEl.inert; // a held race game waits for its start
  const ms = running ? s.elapsed_ms + (performance.now() - receivedAt) : s.elapsed_ms;
  document.getElementById("timer").textContent = duration(ms);
}
setInterval(tick, 250);

// -- actions -------------------------------------------------------------------------------------
function move(m, { auto = false } = {}) {
  if (!auto) {
    suppressAuto = false;
    finishing = false; // a move of the player's own stops the finish
  }
  ui.selected = null;
  ui.hint = [];
  const base = view();
  const next = settings.instant ? guesser.after(base, m) : null;
  if (!client.request({ kind: "move", move: m })) {
    draw();
    return refused();
  }
  if (next) {
    pending.push({ move: m, ply: base.ply, position: next.position });
    guess = next;
  }
  sound(m.startsWith("deal") ? "deal" : "move");
  if (client.down) sayDown();
  else say("");
  draw();
}

// A click that was not sent: say why, so nothing seems to be waiting when it is not.
function refused() {
  if (client.down && client.inflight) {
    say(gettext("Reconnecting; your move is waiting. That click was not sent."));
  } else if (client.down) {
    say(gettext("The server cannot be reached: that was not sent. Reconnecting…"));
  }
  else if (client.state.status === "playing") say(gettext("Wait for the server's answer to your last move."));
}

function select(id) {
  ui.selected = id;
  if (!ui.hint.includes(id)) ui.hint = [];
  const top = shownPiles()[id]?.slice(-1)[0];
  say(
    top
      ? interpolate(gettext("%(card)s selected: choose where it goes."), { card: cardName(top) }, true)
      : "",
  );
  draw();
}

function deselect() {
  if (!ui.selected) return;
  ui.selected = null;
  ui.hint = [];
  say("");
  draw();
}

// A pile was clicked, tapped, or chosen with its key.
function activate(id) {
  if (client.state.status !== "playing" || over) return;
  if (id === "s") return deal();
  // A move waits for a server that cannot be reached: nothing else is picked up meanwhile.
  if (client.down && client.inflight) return refused();
  const sel = ui.selected;
  if (sel) {
    if (id === sel) return deselect();
    const m = `${sel}-${asDest(id)}`;
    if (legal(m)) return move(m);
    if (ui.sources.has(id)) return select(id);
    ui.selected = null;
    draw();
    return say(
      interpolate(
        gettext("%(card)s cannot go on %(pile)s."),
        { card: cardName(shownPiles()[sel].slice(-1)[0]), pile: pileName(asDest(id)) },
        true,
      ),
    );
  }
  if (ui.sources.has(id)) return select(id);
  const pile = shownPiles()[id];
  if (pile && pile.length && !/^[fa]/.test(id)) say(gettext("This card has no move now."));
}

function sendHome(id) {
  const m = `${id}-${HOME}`;
  if (legal(m)) move(m);
  else if (shownPiles()[id]?.length) say(gettext("This card cannot go home now."));
}

function deal(reverse = false) {
  const m = reverse ? "deal-reverse" : "deal";
  if (legal(m)) move(m);
  else if (client.state.status === "playing") say(gettext("The stock is empty."));
}

function undo() {
  if (!client.state.can_undo) {
    return say(client.state.moves_on_board ? gettext("Undo is not allowed here.") : gettext("Nothing to undo."));
  }
  suppressAuto = true; // do not put an Ace straight back out after the player took it back
  finishing = false;
  ui.selected = null;
  if (!client.request({ kind: "undo" })) refused();
}

// A hint (practice games only): the server's solver names the next move of a win.
let hintPending = false;
async function hint() {
  const button = document.getElementById("btn-hint");
  if (!button || client.state.status !== "playing") return;
  button.disabled = true;
  hintPending = true;
  say(gettext("Looking for a winning line…"));
  try {
    let h = await api("POST", `/api/v1/games/${client.id}/hint/`);
    while (h.status === "solving") {
      // 202: the solver works in the background; ask again where and when it says.
      await new Promise((done) => setTimeout(done, 1000 * h.retry_after));
      h = await api("GET", `/api/v1/games/${client.id}/hint/?ply=${h.ply}`);
    }
    if (h.verdict === "won") {
      const piles = shownPiles();
      say(interpolate(gettext("Hint: %(move)s"), { move: moveWords(h.move, piles) }, true));
      const [source, dst] = h.move.split("-");
      if (dst && sourcesOf(view()).has(source)) {
        ui.selected = source;
        const home = dst === "f" ? foundationFor(piles[source].slice(-1)[0], piles) : dst;
        ui.hint = [source, home || dst];
        draw();
      }
    } else if (h.verdict === "lost") {
      say(gettext("This game can no longer be won."));
    } else {
      say(gettext("No winning line found in time."));
    }
  } catch (err) {
    say(errorText(err));
  } finally {
    hintPending = false;
    controls();
  }
}

// Moves the page plays for its player, one at a time, as ordinary server moves: the
// server's finishing line once "Finish" is pressed, and its safe moves home when the
// setting asks for them. Each waits for the last one's answer, so each one is drawn.
function autoPlay() {
  const s = client.state;
  if (over || boardEl.inert || s.status !== "playing" || client.busy) {
    finishing = finishing && s.status === "playing";
    return;
  }
  if (finishing && s.finish.length) return move(s.finish[0], { auto: true });
  finishing = false;
  if (!settings.autoHome || suppressAuto) return;
  if (s.safe_moves.length) move(s.safe_moves[0], { auto: true });
}

// Finish: the whole line is drawn at once (its cards leave one after the other) and sent
// pipelined, each move with its ply (game.js); the server checks each as an ordinary move.
// When the page cannot draw it (the setting is off, a move only the server can work out)
// or the socket is not up, the moves go one at a time as before.
function finish() {
  const line = client.state.finish;
  if (!line.length || over) return;
  finishing = true;
  ui.selected = null;
  ui.hint = [];
  say(gettext("Playing the last cards home…"));
  let s = view();
  const steps = [];
  const order = [];
  for (const m of settings.instant && !guess ? line : []) {
    const next = guesser.after(s, m);
    if (!next) break;
    order.push(s.position.piles[m.split("-")[0]].slice(-1)[0]);
    steps.push({ move: m, ply: s.ply, position: next.position });
    s = next;
  }
  if (steps.length === line.length && client.requestLine(line)) {
    pending.push(...steps);
    guess = s;
    sound("move");
    draw({ order });
    return;
  }
  autoPlay();
}

// -- pointer: click, double-click, drag (mouse and touch) ----------------------------------------
let lastClick = { pile: null, t: 0 };
let suppressClick = false;
let drag = null;

boardEl.addEventListener("click", (ev) => {
  if (suppressClick) return;
  const pileEl = ev.target.closest("[data-pile], [data-zone]");
  if (!pileEl) return deselect();
  const id = pileEl.dataset.pile || pileEl.dataset.zone;
  const now = performance.now();
  if (lastClick.pile === id && now - lastClick.t < 400 && id !== "s") {
    lastClick = { pile: null, t: 0 };
    ui.selected = null;
    return sendHome(id);
  }
  // A click that put a card on this pile does not arm a double click on it.
  const dropped = ui.selected && ui.selected !== id;
  lastClick = dropped ? { pile: null, t: 0 } : { pile: id, t: now };
  activate(id);
});

boardEl.addEventListener("pointerdown", (ev) => {
  if (ev.button !== 0 || client.state.status !== "playing" || (client.down && client.inflight)) return;
  const handle = ev.target.closest(".pile.source .card");
  if (!handle) return;
  const pileEl = handle.closest("[data-pile]");
  const top = pileEl.querySelector(".card:last-of-type");
  drag = { id: pileEl.dataset.pile, x: ev.clientX, y: ev.clientY, started: false, top, pointer: ev.pointerId };
});

window.addEventListener("pointermove", (ev) => {
  if (!drag || ev.pointerId !== drag.pointer) return;
  const dx = ev.clientX - drag.x;
  const dy = ev.clientY - drag.y;
  if (!drag.started) {
    if (Math.hypot(dx, dy) < 8) return;
    drag.started = true;
    ui.selected = drag.id;
    draw();
    const top = boardEl.querySelector(`[data-pile="${drag.id}"] .card:last-of-type`);
    const rect = top.getBoundingClientRect();
    drag.ghost = top.cloneNode(true);
    drag.ghost.classList.add("drag-ghost");
    drag.ghost.removeAttribute("tabindex");
    drag.ghost.setAttribute("aria-hidden", "true");
    drag.ghost.style.width = rect.width + "px";
    drag.ghost.style.height = rect.height + "px";
    drag.offX = drag.x - rect.left;
    drag.offY = drag.y - rect.top;
    document.body.append(drag.ghost);
    top.classList.add("drag-source");
  }
  ev.preventDefault();
  drag.ghost.style.transform = `translate(${ev.clientX - drag.offX}px, ${ev.clientY - drag.offY}px)`;
  glowUnder(ev.clientX, ev.clientY, drag.id);
});

// While a card is dragged, the top card of the pile under it glows if it may go there.
let glowing = null;
function glowUnder(x, y, src) {
  const under = document.elementFromPoint(x, y);
  const target = under && under.closest("[data-pile], [data-zone]");
  const id = target && (target.dataset.pile || target.dataset.zone);
  const ok = id && id !== src && legal(`${src}-${asDest(id)}`);
  const pile = ok ? boardEl.querySelector(`[data-pile="${id === "f" ? destinationFoundation(src) : id}"]`) : null;
  if (pile === glowing) return;
  if (glowing) glowing.classList.remove("drop-glow");
  glowing = pile;
  if (pile) pile.classList.add("drop-glow");
}
const destinationFoundation = (src) => foundationFor(shownPiles()[src].slice(-1)[0], shownPiles()) || "f1";

function endDrag(ev, drop) {
  if (!drag || ev.pointerId !== drag.pointer) return;
  const d = drag;
  drag = null;
  if (!d.started) return;
  glowUnder(-1, -1, d.id);
  suppressClick = true;
  setTimeout(() => (suppressClick = false), 0);
  const under = drop ? document.elementFromPoint(ev.clientX, ev.clientY) : null;
  const target = under && under.closest("[data-pile], [data-zone]");
  const id = target && (target.dataset.pile || target.dataset.zone);
  ui.selected = null;
  const m = id && id !== d.id ? `${d.id}-${asDest(id)}` : null;
  if (m && legal(m)) {
    d.ghost.remove();
    return move(m);
  }
  if (m) say(gettext("That move is not allowed."));
  // Back where it came from (about 150 ms), then the card shows there again.
  const home = boardEl.querySelector(`[data-pile="${d.id}"] .card:last-of-type`).getBoundingClientRect();
  const back = still()
    ? null
    : d.ghost.animate(
        [{ transform: `translate(${home.left}px, ${home.top}px)` }],
        { duration: 150, easing: "ease-out", fill: "forwards" },
      );
  const done = () => {
    d.ghost.remove();
    draw();
  };
  if (back) back.finished.then(done, done);
  else done();
}
window.addEventListener("pointerup", (ev) => endDrag(ev, true));
window.addEventListener("pointercancel", (ev) => endDrag(ev, false));

// -- keyboard ------------------------------------------------------------------------------------
document.addEventListener("keydown", (ev) => {
  if (ev.defaultPrevented || ev.altKey || ev.metaKey) return;
  if (document.querySelector("dialog[open]") || boardEl.inert) return;
  const tag = ev.target.tagName;
  // A ticked setting keeps the focus, but the game's keys still work (not in text fields).
  const toggle = tag === "INPUT" && ["checkbox", "radio"].includes(ev.target.type);
  if (["INPUT", "SELECT", "TEXTAREA"].includes(tag) && !toggle) return;
  if (ev.ctrlKey) {
    if (ev.code === "KeyZ") {
      ev.preventDefault();
      undo();
    }
    return;
  }
  if (ev.key === "Escape") {
    lastClick = { pile: null, t: 0 }; // the next click on that card picks it up again, not home
    return deselect();
  }
  if (ev.key === "Enter" && ev.target.classList?.contains("handle")) {
    ev.preventDefault();
    const id = ev.target.closest("[data-pile]").dataset.pile;
    return activate(id);
  }
  // Native buttons and links keep Enter and Space.
  if ((tag === "BUTTON" || tag === "A" || toggle) && (ev.key === "Enter" || ev.code === "Space")) return;
  const action = KEYMAP[ev.code];
  if (!action) return;
  ev.preventDefault();
  if (action === "deal") return deal(ev.shiftKey && family !== "bristol");
  if (action === "undo") return undo();
  if (ev.shiftKey && action !== HOME) return sendHome(action);
  activate(action);
});

// -- buttons and settings ------------------------------------------------------------------------
document.getElementById("btn-deal").addEventListener("click", () => deal(false));
document.getElementById("btn-deal-reverse").addEventListener("click", () => deal(true));
document.getElementById("btn-undo").addEventListener("click", undo);
document.getElementById("btn-finish").addEventListener("click", finish);
document.getElementById("btn-hint")?.addEventListener("click", hint);
const resignDialog = document.getElementById("resign-dialog");
document.getElementById("btn-resign").addEventListener("click", () => resignDialog.showModal());
resignDialog.addEventListener("close", () => {
  if (resignDialog.returnValue === "resign" && !client.request({ kind: "resign" })) refused();
});

const soundBox = document.getElementById("set-sounds");
soundBox.checked = settings.sounds;
soundBox.addEventListener("change", () => {
  settings.sounds = soundBox.checked;
  saveSettings();
  sound("move");
});
const autoBox = document.getElementById("set-auto-home");
const hintBox = document.getElementById("set-key-hints");
const instantBox = document.getElementById("set-instant");
instantBox.checked = settings.instant;
instantBox.addEventListener("change", () => {
  settings.instant = instantBox.checked;
  saveSettings();
});
autoBox.checked = settings.autoHome;
hintBox.checked = settings.keyHints;
autoBox.addEventListener("change", () => {
  settings.autoHome = autoBox.checked;
  saveSettings();
  suppressAuto = false;
  autoPlay();
});
hintBox.addEventListener("change", () => {
  settings.keyHints = hintBox.checked;
  saveSettings();
  draw();
});

function fillKeyHelp() {
  for (const node of document.querySelectorAll("[data-keycode]")) {
    node.textContent = node.dataset.keycode
      .split(" ")
      .map((c) => keyLabel(c))
      .join(" ");
  }
}

// -- the end -------------------------------------------------------------------------------------
const endDialog = document.getElementById("end-dialog");

const endTitle = (status) =>
  ({
    won: gettext("You won!"),
    lost: gettext("No more moves: the game is lost."),
    resigned: gettext("You resigned this game."),
  })[status];

// The result: `open` shows it beside the board (not modal, so the finished board stays
// in view); "Show the result" opens it as a dialog.
async function showEnd(open, modal = false) {
  const s = client.state;
  const title = endTitle(s.status);
  document.getElementById("end-title").textContent = title || statusText(s.status, s.kind);
  document.getElementById("end-score").textContent = `${s.score} / ${s.max_score}`;
  document.getElementById("end-moves").textContent = s.ply;
  document.getElementById("end-time").textContent = duration(s.elapsed_ms);
  document.getElementById("finished-text").textContent = title || "";
  for (const id of ["end-rank-row", "end-streak-row", "end-par-row"]) document.getElementById(id).hidden = true;
  if (open && endDialog.open && modal !== endDialog.matches(":modal")) endDialog.close();
  if (open && !endDialog.open) {
    if (modal) endDialog.showModal();
    else endDialog.show();
  }
  if (s.kind !== "daily") return;
  nextChallenge(s);
  const facts = await dailyFacts(s);
  if (facts.rank) {
    const { rank, total } = facts.rank;
    let text = fmt(gettext("%(rank)s of %(total)s"), { rank, total });
    if (total > 1) {
      const share = new Intl.NumberFormat(lang(), { style: "percent" }).format((total - rank) / total);
      text += " · " + fmt(gettext("better than %(share)s of the day's players"), { share });
    }
    show("end-rank", text);
  }
  if (facts.streak !== null) {
    show("end-streak", fmt(ngettext("%(n)s day", "%(n)s days", facts.streak), { n: facts.streak }));
  }
  if (facts.par) {
    show("end-par", fmt(gettext("%(par)s moves (you: %(moves)s)"), { par: facts.par, moves: s.ply }));
  }
  document.getElementById("share-text").textContent = shareText(s, facts);
}

// A ranked daily's result offers the day's next challenge: the next variant's daily.
function nextChallenge(s) {
  const button = document.getElementById("btn-next-daily");
  const keys = Object.keys(variantNames());
  const next = keys[(keys.indexOf(s.variant) + 1) % keys.length];
  if (!button || !s.ranked || !next || next === s.variant) return;
  button.textContent = fmt(gettext("Next challenge: %(variant)s"), { variant: variantNames()[next].name });
  button.dataset.variant = next;
  button.hidden = false;
}
document.getElementById("btn-next-daily")?.addEventListener("click", (ev) => {
  const button = ev.currentTarget;
  startGame(button, `/api/v1/daily/${button.dataset.variant}/${client.state.date}/play/`, undefined, sayError);
});

function show(id, text) {
  document.getElementById(id).textContent = text;
  document.getElementById(id + "-row").hidden = false;
}

// What the day's board, the player's record and the deal (after its day) say about a
// finished daily. Each is a bonus: the board and statistics pages have them too.
async function dailyFacts(s) {
  const facts = { rank: null, streak: null, par: null };
  const me = document.querySelector(".site-nav .username")?.textContent;
  const asks = [
    api("GET", `/api/v1/daily/${s.variant}/${s.date}/`).then((d) => (facts.par = d.par)),
  ];
  if (s.ranked) {
    asks.push(
      api("GET", `/api/v1/daily/${s.variant}/${s.date}/board/?limit=1&around=0`).then((b) => {
        if (b.me) facts.rank = { rank: b.me.rank, total: b.total };
      }),
    );
    if (me) {
      asks.push(
        api("GET", `/api/v1/players/${encodeURIComponent(me)}/stats/`).then((r) => {
          const v = r.variants.find((x) => x.variant === s.variant);
          facts.streak = v ? v.current_streak : 0;
        }),
      );
    }
  }
  await Promise.allSettled(asks);
  return facts;
}

// A short text of the result without the deal in it, in the page's language.
function shareText(s, facts) {
  const name = variantNames()[s.variant]?.name || s.variant;
  const day = dateText(s.date);
  const parts = [
    s.status === "won"
      ? fmt(gettext("won in %(moves)s moves"), { moves: s.ply })
      : fmt(gettext("%(score)s of %(max)s cards home in %(moves)s moves"), {
          score: s.score,
          max: s.max_score,
          moves: s.ply,
        }),
    duration(s.elapsed_ms),
  ];
  if (facts.rank) parts.push(fmt(gettext("rank %(rank)s of %(total)s"), facts.rank));
  return fmt(gettext("Patience: %(variant)s, daily of %(day)s"), { variant: name, day }) + "\n" + parts.join(" · ");
}

async function share() {
  const text = document.getElementById("share-text").textContent;
  const done = document.getElementById("share-done");
  try {
    await navigator.clipboard.writeText(text);
    done.textContent = gettext("Copied.");
  } catch (err) {
    // No clipboard (an insecure page, or refused): select the text to copy by hand.
    getSelection().selectAllChildren(document.getElementById("share-text"));
    done.textContent = gettext("Select and copy the text.");
  }
}
document.getElementById("btn-share")?.addEventListener("click", share);
document.getElementById("btn-show-result").addEventListener("click", () => showEnd(true, true));
document.getElementById("end-close").addEventListener("click", () => endDialog.close());
const sayError = (err) => say(errorText(err));
for (const btn of document.querySelectorAll("[data-new-practice]")) {
  btn.addEventListener("click", () => startGame(btn, "/api/v1/games/", { variant }, sayError));
}

// -- midnight --------------------------------------------------------------------------------------
// A ranked daily still open when its day ends no longer counts (its deal and the winning
// line are public now): say so at once, stop taking moves, offer a practice game of it.
function dayOver() {
  if (over) return;
  over = true;
  ui.selected = null;
  document.getElementById("ranked-label").textContent = gettext("no longer counts");
  say("");
  root.dataset.dayOver = "true";
  draw();
}
if (root.dataset.secondsLeft !== undefined && client.state.status === "playing") {
  // The server's whole seconds are rounded down: one more, so the page is never early.
  setTimeout(dayOver, (Number(root.dataset.secondsLeft) + 1) * 1000);
}
document.getElementById("btn-day-practice")?.addEventListener("click", (ev) => {
  const { variant: v, date } = ev.currentTarget.dataset;
  startGame(ev.currentTarget, `/api/v1/daily/${v}/${date}/play/`, undefined, sayError);
});

// A race page holds the board (inert) before its start and after its time is up.
new MutationObserver(() => {
  deselect();
  if (!boardEl.inert) {
    receivedAt = performance.now(); // its clock starts now: the server's time is asked for
    client.resync();
  }
  autoPlay();
}).observe(boardEl, { attributes: true, attributeFilter: ["inert"] });

// Closing the tab while a move waits for the server would lose it: ask first.
window.addEventListener("beforeunload", (ev) => {
  if (client.inflight || client.queue.length) {
    ev.preventDefault();
    ev.returnValue = "";
  }
});

// A page hidden for a while (phone in a pocket) asks for the state when it comes back.
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") client.resync();
});

fillKeyHelp();
draw({ deal: client.state.ply === 0 && !!client.state.position });
if (client.state.status !== "playing") showEnd(false);
else autoPlay();
