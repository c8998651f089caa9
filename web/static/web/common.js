// Shared helpers of the pages: the REST API with CSRF, errors, formatting, translations.
/* global gettext, interpolate */

// The catalog script (/jsi18n/) defines gettext, ngettext, pgettext and interpolate;
// these stand-ins keep the pages working in English if it failed to load.
if (typeof window.gettext !== "function") {
  window.gettext = (s) => s;
  window.ngettext = (one, many, n) => (n === 1 ? one : many);
  window.pgettext = (ctx, s) => s;
  window.interpolate = (s, obj) => s.replace(/%\((\w+)\)s/g, (_, k) => String(obj[k]));
}

// Named interpolation: fmt(translatedText, {n: 3}) fills "%(n)s".
export const fmt = (s, obj) => interpolate(s, obj, true);

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message || code);
    this.status = status;
    this.code = code;
    this.details = details || {};
  }
}

function cookie(name) {
  for (const part of document.cookie.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return null;
}

let csrfPromise = null;

// The CSRF token for unsafe requests: from the cookie, else from GET /api/v1/auth/csrf/.
export async function csrfToken(fresh = false) {
  const fromCookie = cookie("csrftoken");
  if (fromCookie && !fresh) return fromCookie;
  if (!csrfPromise || fresh) {
    csrfPromise = fetch("/api/v1/auth/csrf/", { credentials: "same-origin" })
      .then((r) => r.json())
      .then((d) => d.csrf_token)
      .finally(() => {
        setTimeout(() => (csrfPromise = null), 0);
      });
  }
  return csrfPromise;
}

// Call the REST API. Resolves with the JSON body (null for 204); rejects with ApiError.
// Network failures reject with an ApiError of status 0 and code "network".
export async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  if (!["GET", "HEAD"].includes(method)) headers["X-CSRFToken"] = await csrfToken();
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, "network", gettext("The server cannot be reached."));
  }
  if (res.status === 204) return null;
  let data = null;
  try {
    data = await res.json();
  } catch (e) {
    data = null;
  }
  if (!res.ok) {
    const err = (data && data.error) || {};
    throw new ApiError(res.status, err.code || "http_" + res.status, err.message, err.details);
  }
  return data;
}

// Every row of a list, page after page through each page's `next` link.
export async function apiRows(path) {
  const rows = [];
  for (let link = path; link; ) {
    const page = await api("GET", link);
    rows.push(...page.results);
    link = page.next;
  }
  return rows;
}

// Start a game (a practice game, a daily) with a POST and open it; the button waits.
// A visitor without an account who starts a practice game becomes a guest first
// (POST /api/v1/auth/guest/, a session): practice needs no account. `firstMove`: a move
// to play in it before it opens.
export async function startGame(button, path, body, onError, firstMove = null) {
  button.disabled = true;
  try {
    let game;
    try {
      game = await api("POST", path, body);
    } catch (err) {
      if (path !== "/api/v1/games/" || err.code !== "not_authenticated") throw err;
      await api("POST", "/api/v1/auth/guest/");
      await csrfToken(true); // logging in gave the session a new CSRF token
      game = await api("POST", path, body);
    }
    // The move chosen before the game existed (the landing page's preview) is its first.
    if (firstMove) await api("POST", `/api/v1/games/${game.id}/moves/`, { move: firstMove, ply: game.ply });
    location.href = `/play/${game.id}/`;
  } catch (err) {
    button.disabled = false;
    onError(err);
  }
}

// A message for people from an ApiError (codes the pages know get a translated text).
export function errorText(err) {
  const known = {
    network: gettext("The server cannot be reached."),
    stale_ply: gettext("The game had moved on; the board is up to date again."),
    illegal_move: gettext("That move is not allowed."),
    game_finished: gettext("The game is over."),
    undo_not_allowed: gettext("Undo is not allowed here."),
    not_authenticated: gettext("Please log in."),
    throttled: gettext("Too many requests; please wait a moment."),
    not_found: gettext("Not found."),
    permission_denied: gettext("Not allowed. Reload the page and try again."),
    race_not_started: gettext("The race has not started yet."),
    race_over: gettext("The race is over."),
    already_racing: gettext("You are in another race already: finish or leave it first."),
    race_full: gettext("This race is full."),
    race_started: gettext("This race has started: nobody joins or leaves it now."),
    not_creator: gettext("Only the player who created this race can start it."),
    too_few_players: gettext("A race needs at least two players."),
    race_not_finished: gettext("The race is not over yet."),
    race_pool_empty: gettext("No deal is ready for a race yet. Try again in a few seconds."),
    guest_not_allowed: gettext("Register (free) to play the daily challenges and races."),
    guest_limit: gettext("Many games were started from your address without an account: register (free) to play on, or wait an hour."),
  };
  if (err && known[err.code]) return known[err.code];
  return (err && err.message) || gettext("Something went wrong.");
}

export function duration(ms) {
  const total = Math.max(0, Math.floor((ms || 0) / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

export function jsonScript(id) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}

export function variantNames() {
  const list = jsonScript("variants-data") || [];
  return Object.fromEntries(list.map((v) => [v.key, v]));
}

// A game's status in words; a race's game ends "expired" at the race's time limit.
export function statusText(status, kind) {
  if (status === "expired" && kind === "race") return gettext("Out of time");
  return (
    {
      playing: gettext("Playing"),
      won: gettext("Won"),
      lost: gettext("Lost"),
      resigned: gettext("Resigned"),
      move_limit: gettext("Ended at the move limit"),
      expired: gettext("Expired: the day ended"),
    }[status] || status
  );
}

export function wsUrl(path) {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${location.host}${path}`;
}

export function lang() {
  return document.documentElement.lang || "en";
}

// A day ("2026-03-10") in the page's language, the way the pages print dates.
export function dateText(day) {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d)).toLocaleDateString(lang(), { dateStyle: "long", timeZone: "UTC" });
}

// An instant in the reader's time zone, in the pages' one style: "March 10, 2026, 14:05".
export function dateTime(text) {
  if (!text) return "";
  const d = new Date(text);
  const day = d.toLocaleDateString(lang(), { dateStyle: "long" });
  return `${day}, ${d.toLocaleTimeString(lang(), { hour: "2-digit", minute: "2-digit", hourCycle: "h23" })}`;
}

// A socket that reconnects with exponential backoff (1 s doubling to 30 s, with jitter).
export class ReconnectingSocket {
  constructor(path, { onMessage, onOpen, onClose } = {}) {
    this.path = path;
    this.onMessage = onMessage || (() => {});
    this.onOpen = onOpen || (() => {});
    this.onClose = onClose || (() => {});
    this.delay = 1000;
    this.ws = null;
    this.stopped = false;
    this.timer = null;
    this.open = false;
    this.connect();
  }

  connect() {
    if (this.stopped) return;
    let ws;
    try {
      ws = new WebSocket(wsUrl(this.path));
    } catch (e) {
      this.retry();
      return;
    }
    this.ws = ws;
    ws.addEventListener("open", () => {
      this.open = true;
      this.delay = 1000;
      this.onOpen();
    });
    ws.addEventListener("message", (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      this.onMessage(msg);
    });
    ws.addEventListener("close", () => {
      const was = this.open;
      this.open = false;
      if (this.ws === ws) this.ws = null;
      this.onClose(was);
      this.retry();
    });
  }

  retry() {
    if (this.stopped || this.timer) return;
    const wait = this.delay * (0.8 + Math.random() * 0.4);
    this.delay = Math.min(this.delay * 2, 30000);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, wait);
  }

  send(obj) {
    if (!this.ws || !this.open) return false;
    try {
      this.ws.send(JSON.stringify(obj));
      return true;
    } catch (e) {
      return false;
    }
  }

  // Try again now (the server answers again): no need to wait out the backoff.
  reconnectNow() {
    if (this.stopped || this.ws) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.delay = 1000;
    this.connect();
  }

  // Drop the current connection (it will reconnect with backoff).
  drop() {
    if (this.ws) {
      try {
        this.ws.close();
      } catch (e) {
        /* already closed */
      }
    }
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.drop();
  }
}
