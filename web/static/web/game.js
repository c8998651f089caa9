// One game's connection to the server: the WebSocket first, REST when the socket is down.
//
// The ply protocol: every request carries the ply (log entries) the client has seen.
// One request is in flight at a time; queued requests are checked against the newest
// state before they go. When the socket drops (or does not answer) during a request,
// the same request is sent again over REST with the same ply: the server answers a
// retry of an entry it already stored without applying it again, so nothing is lost
// or doubled. A stale ply, or a reconnect, makes the client fetch the state and go on.
import { ApiError, ReconnectingSocket, api } from "./common.js";

const WS_TIMEOUT_MS = 6000;

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
    this.live = false;
    this.onConnection("connecting");
    this.socket = new ReconnectingSocket(`/ws/v1/games/${gameId}/`, {
      onOpen: () => {
        this.live = true;
        this.onConnection("live");
      },
      onClose: () => {
        this.live = false;
        this.onConnection("offline");
        const f = this.inflight;
        if (f && f.via === "ws") this.sendRest(f);
      },
      onMessage: (msg) => this.message(msg),
    });
  }

  get busy() {
    return !!this.inflight || this.queue.length > 0;
  }

  // Queue a request: {kind: "move", move} | {kind: "undo"} | {kind: "resign"}.
  request(action) {
    if (this.state.status !== "playing") return false;
    this.queue.push(action);
    this.pump();
    return true;
  }

  valid(action) {
    const s = this.state;
    if (s.status !== "playing") return false;
    if (action.kind === "move") return s.legal_moves.includes(action.move);
    if (action.kind === "undo") return s.can_undo;
    return true;
  }

  pump() {
    while (!this.inflight && this.queue.length) {
      const action = this.queue.shift();
      if (!this.valid(action)) continue;
      this.send(action);
    }
    if (!this.inflight && !this.queue.length) this.onIdle();
  }

  send(action) {
    const f = { action, ply: this.state.ply, via: "ws", timer: null };
    this.inflight = f;
    const msg = { type: action.kind, ply: f.ply };
    if (action.kind === "move") msg.move = action.move;
    if (action.kind === "resign") delete msg.ply;
    if (this.live && this.socket.send(msg)) {
      f.timer = setTimeout(() => {
        if (this.inflight === f && f.via === "ws") {
          // No answer: treat the socket as broken and retry over REST.
          this.sendRest(f);
          this.socket.drop();
        }
      }, WS_TIMEOUT_MS);
    } else {
      this.sendRest(f);
    }
  }

  async sendRest(f) {
    clearTimeout(f.timer);
    f.via = "rest";
    const base = `/api/v1/games/${this.id}/`;
    const a = f.action;
    let attempt = 0;
    for (;;) {
      try {
        let data;
        if (a.kind === "move") data = await api("POST", base + "moves/", { move: a.move, ply: f.ply });
        else if (a.kind === "undo") data = await api("POST", base + "undo/", { ply: f.ply });
        else data = await api("POST", base + "resign/");
        this.receive(data);
        break;
      } catch (err) {
        if (err instanceof ApiError && err.status === 0 && attempt < 6) {
          attempt += 1;
          await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
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
    this.onError(err);
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
