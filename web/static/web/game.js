// One game's connection to the server: the WebSocket first, REST when the socket is down.
//
// The ply protocol: every request carries the ply (log entries) the client has seen.
// One request is in flight at a time; queued requests are checked against the newest
// state before they go. When the socket drops (or does not answer) during a request,
// the same request is sent again over REST with the same ply: the server answers a
// retry of an entry it already stored without applying it again, so nothing is lost
// or doubled. A stale ply, or a reconnect, makes the client fetch the state and go on.
//
// A line of card moves (Finish) goes at once: every move over the socket with its own
// ply (n, n+1, ...), without waiting for the answers. The server handles a socket's frames
// one at a time, in order, so each is checked as an ordinary move. The answers come in
// that order; when one is refused, the moves after it are refused too (their plies are
// ahead of the game): the client drops them and ignores their answers. When the socket
// drops meanwhile, the moves not yet answered go again over REST, one after the other,
// each with its ply: one already stored is answered as a duplicate, not played twice.
//
// When the server cannot be reached at all ("down"), the request in flight waits and is
// retried until the server answers; nothing else is accepted meanwhile, so no click is
// ever queued silently to run after the outage (a deal in a ranked game cannot be undone).
import { ApiError, ReconnectingSocket, api } from "./common.js";

const WS_TIMEOUT_MS = 6000;
const RETRY_MAX_MS = 4000;

// A failure that says nothing about the request: the server (or its proxy) is not there.
const unreachable = (err) => err instanceof ApiError && (err.status === 0 || err.status >= 502);
const backoff = (attempt) => Math.min(RETRY_MAX_MS, 500 * 2 ** attempt);

export class GameClient {
  constructor(gameId, state, handlers = {}) {
    this.id = gameId;
    this.state = state;
    this.onState = handlers.onState || (() => {});
    this.onError = handlers.onError || (() => {});
    this.onConnection = handlers.onConnection || (() => {});
    this.onIdle = handlers.onIdle || (() => {});
    this.queue = [];
    this.inflight = null;
    this.ahead = []; // moves of a line sent after the one in flight, not yet answered
    this.orphans = 0; // answers still to come for moves of a line dropped after a refusal
    this.generation = 0; // sockets opened so far: a line's frames belong to one of them
    this.live = false;
    this.down = false;
    this.probing = false;
    this.wake = null; // cuts short the wait before the next retry of a waiting request
    this.onConnection("connecting");
    this.socket = new ReconnectingSocket(`/ws/v1/games/${gameId}/`, {
      onOpen: () => {
        this.generation += 1;
        this.orphans = 0;
        this.live = true;
        this.down = false;
        this.onConnection("live");
        // The server is back: a request that waits goes again now, not after its backoff.
        if (this.wake) this.wake();
      },
      onClose: () => {
        this.live = false;
        this.orphans = 0;
        if (!this.down) this.onConnection("offline");
        const f = this.inflight;
        if (f && f.via === "ws") this.sendRest(f);
        else if (!f) this.probe();
      },
      onMessage: (msg) => this.message(msg),
    });
  }

  get busy() {
    return !!this.inflight || this.queue.length > 0 || this.ahead.length > 0;
  }

  // Send card moves as one line, pipelined (see the top of this file). False, and nothing
  // sent, unless the socket is up and nothing else is pending: then the caller plays
  // them one at a time.
  requestLine(moves) {
    if (this.state.status !== "playing" || this.busy || this.down || !this.live || !moves.length) return false;
    const flights = [];
    let ply = this.state.ply;
    for (const move of moves) {
      const f = { action: { kind: "move", move }, ply, via: "ws", timer: null, generation: this.generation };
      if (!this.socket.send({ type: "move", move, ply })) f.via = "unsent";
      flights.push(f);
      ply += 1;
    }
    this.ahead = flights.slice(1);
    this.inflight = flights[0];
    this.await(flights[0]);
    return true;
  }

  // A request sent over the socket: wait for its answer, or go over REST. A move of a line
  // that was not sent, or sent on a socket since closed, goes over REST with its ply.
  await(f) {
    if (f.via !== "ws" || f.generation !== this.generation || !this.live) {
      this.sendRest(f);
      return;
    }
    f.timer = setTimeout(() => {
      if (this.inflight === f && f.via === "ws") {
        // No answer: treat the socket as broken and retry over REST.
        this.sendRest(f);
        this.socket.drop();
      }
    }, WS_TIMEOUT_MS);
  }

  // Queue a request: {kind: "move", move} | {kind: "undo"} | {kind: "resign"}.
  // A deal or a resignation cannot be taken back: refused (false) while another request
  // is pending or the server is down. While it is down, one card move may wait to be
  // sent; nothing else is accepted.
  request(action) {
    if (this.state.status !== "playing") return false;
    const final = action.kind === "resign" || (action.kind === "move" && action.move.startsWith("deal"));
    if (final && (this.busy || this.down)) return false;
    if (this.down && (this.busy || action.kind !== "move")) return false;
    this.queue.push(action);
    this.pump();
    return true;
  }

  setDown(down) {
    if (down === this.down) return;
    this.down = down;
    if (down) this.queue = [];
    if (down) this.orphans = 0;
    this.onConnection(down ? "down" : this.live ? "live" : "offline");
    if (!down && !this.live) this.socket.reconnectNow();
  }

  // Wait before a retry; `wake` ends the wait early (the socket is back).
  nap(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }

  // The socket is gone and nothing is in flight: is the server there? Asks for the
  // state until it answers, so the page can say "reconnecting" and refuse clicks.
  async probe() {
    if (this.probing) return;
    this.probing = true;
    for (let attempt = 0; !this.live; attempt++) {
      try {
        const data = await api("GET", `/api/v1/games/${this.id}/`);
        this.setDown(false);
        this.receive(data);
        break;
      } catch (err) {
        if (!unreachable(err)) break;
        this.setDown(true);
        await new Promise((r) => setTimeout(r, backoff(attempt)));
      }
    }
    this.probing = false;
  }

  valid(action) {
    const s = this.state;
    if (s.status !== "playing") return false;
    if (action.kind === "move") return s.legal_moves.includes(action.move);
    if (action.kind === "undo") return s.can_undo;
    return true;
  }

  pump() {
    while (!this.inflight && this.ahead.length) {
      const f = this.ahead.shift();
      if (this.state.ply > f.ply) continue; // answered already (a later state came first)
      this.inflight = f;
      this.await(f);
    }
    while (!this.inflight && this.queue.length) {
      const action = this.queue.shift();
      if (!this.valid(action)) continue;
      this.send(action);
    }
    if (!this.inflight && !this.queue.length) this.onIdle();
  }

  send(action) {
    const f = { action, ply: this.state.ply, via: "ws", timer: null, generation: this.generation };
    this.inflight = f;
    const msg = { type: action.kind, ply: f.ply };
    if (action.kind === "move") msg.move = action.move;
    if (action.kind === "resign") delete msg.ply;
    if (!(this.live && this.socket.send(msg))) f.via = "unsent";
    this.await(f);
  }

  async sendRest(f) {
    clearTimeout(f.timer);
    f.via = "rest";
    const base = `/api/v1/games/${this.id}/`;
    const a = f.action;
    for (let attempt = 0; ; attempt++) {
      try {
        let data;
        if (a.kind === "move") data = await api("POST", base + "moves/", { move: a.move, ply: f.ply });
        else if (a.kind === "undo") data = await api("POST", base + "undo/", { ply: f.ply });
        else data = await api("POST", base + "resign/");
        this.setDown(false);
        this.receive(data);
        break;
      } catch (err) {
        if (unreachable(err)) {
          // The same request, with the same ply, until the server answers: a retry
          // of an entry it already stored is answered without applying it again.
          this.setDown(true);
          await this.nap(backoff(attempt));
          continue;
        }
        this.failed(err, a);
        await this.fetchState();
        break;
      }
    }
    if (this.inflight === f) {
      this.inflight = null;
      this.pump();
    }
  }

  failed(err, action) {
    if (action && action.kind === "resign" && err.code === "game_finished") return;
    if (err.code === "stale_ply") this.queue = [];
    this.dropLine();
    this.onError(err);
  }

  // A move of a line was refused: the ones after it cannot be played (their plies are
  // ahead of the game). Those sent on the open socket will be refused too: ignore that.
  dropLine() {
    for (const f of this.ahead) if (f.via === "ws" && f.generation === this.generation && this.live) this.orphans += 1;
    this.ahead = [];
  }

  async fetchState() {
    try {
      this.receive(await api("GET", `/api/v1/games/${this.id}/`));
    } catch (err) {
      this.onError(err);
    }
  }

  // Ask for the state: over the socket when it is up, else over REST.
  resync() {
    if (!(this.live && this.socket.send({ type: "resync" }))) this.fetchState();
  }

  message(msg) {
    const f = this.inflight;
    if (msg.type === "state" && msg.state) {
      this.receive(msg.state);
      if (f && f.via === "ws") {
        const done =
          f.action.kind === "resign" ? msg.state.status !== "playing" : msg.state.ply > f.ply;
        if (done) this.finish(f);
      }
    } else if (msg.type === "error" && msg.error) {
      if (this.orphans > 0 && ["move", "undo"].includes(msg.cause)) {
        this.orphans -= 1; // the answer to a dropped move of a line
        return;
      }
      const err = new ApiError(409, msg.error.code, msg.error.message, msg.error.details);
      if (f && f.via === "ws") {
        this.failed(err, f.action);
        this.finish(f);
      } else {
        this.onError(err);
      }
      this.resync();
    }
  }

  finish(f) {
    clearTimeout(f.timer);
    if (this.inflight === f) {
      this.inflight = null;
      this.pump();
    }
  }

  // A state from the server: newer (or equal, e.g. a resignation) replaces ours.
  receive(state) {
    if (!state || typeof state.ply !== "number") return;
    if (state.ply < this.state.ply) return;
    const before = this.state;
    this.state = state;
    this.onState(state, before);
    if (!this.inflight && !this.queue.length) this.onIdle();
  }
}
