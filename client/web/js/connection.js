// The websocket connection: requests matched to replies by id, every message dispatched as an
// event, and automatic reconnection with backoff when the socket drops. `moveTo` carries on
// at another server node (where a race runs, docs/cluster.md); a drop comes back home, to
// the address the page started with, which brings the client to its race wherever it is.
//
// A socket can stay open with nothing coming through it (the network gone, a laptop asleep,
// a proxy that keeps the TCP connection): the browser may not notice for minutes. So the
// connection checks itself: after HEARTBEAT_MS without a message it sends a ping, and a
// ping or any request unanswered for ANSWER_MS, or a socket not open ANSWER_MS after it
// was made, means the connection is lost: the status becomes "closed", every waiting
// request fails, and a new socket is opened (the old one is dropped, whatever it still
// delivers).

const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];
export const HEARTBEAT_MS = 5000;
export const ANSWER_MS = 5000;
const CHECK_MS = 1000;
// Requests whose answer may take longer: no deadline (a daily deal being prepared, a
// solver's hint, a race another node must adopt first (to join or watch), a ghost's run replayed). The server
// serves a connection's requests in order, so no ping is sent while one of them waits
// either: it would wait behind it.
const MAY_WAIT = new Set(["start_daily", "hint", "join_race", "watch_race", "race_ghost", "rematch"]);

export class Connection {
  /**
   * @param {object} handlers onOpen(conn) after each (re)connect, onMessage(msg) for every
   *   server message, onStatus("connecting" | "open" | "closed" | "stopped").
   */
  constructor(url, handlers) {
    this.home = url;
    this.url = url;
    this.handlers = handlers;
    this.nextId = 1;
    this.pending = new Map(); // id → {resolve, reject}
    this.failures = 0;
    this.stopped = false;
    this.ws = null;
    this.heardAt = 0; // performance.now() of the last message from the server
    this.watch = null; // the once-a-second check, running while the connection is not stopped
    this.startWatch();
    // The browser's own word on the network, when it has one: faster than any timeout.
    addEventListener("offline", () => this.isOpen && this.lost());
    addEventListener("online", () => this.retryNow());
    this.open();
  }

  /** The check runs only while there is a connection to look after: a stopped one (taken
   * over by another tab) would have it ping nothing once a second for as long as the page
   * stays open. */
  startWatch() {
    clearInterval(this.watch);
    this.watch = setInterval(() => this.check(), CHECK_MS);
  }

  /** Reconnect at once rather than after the backoff (the network is back). */
  retryNow() {
    if (this.stopped || (this.ws && this.ws.readyState !== WebSocket.CLOSED)) return;
    clearTimeout(this.timer);
    this.failures = 0;
    this.open();
  }

  /** Once a second: ping a quiet connection; give up on one whose answers are overdue, or
   * that has not opened within ANSWER_MS (its handshake went nowhere). */
  check() {
    const now = performance.now();
    if (this.ws?.readyState === WebSocket.CONNECTING && now - this.openedAt > ANSWER_MS) this.lost();
    if (!this.isOpen) return;
    const overdue = [...this.pending.values()].some((w) => now > w.deadline);
    if (overdue) this.lost();
    else if (now - this.heardAt > HEARTBEAT_MS && this.pending.size === 0) this.send({ type: "ping" });
  }

  /** The socket is open but nothing answers: drop it, and connect again. */
  lost() {
    const ws = this.ws;
    this.ws = null; // whatever it still says is stale
    ws?.close();
    this.dropped(1006);
  }

  open() {
    this.handlers.onStatus?.("connecting");
    this.openedAt = performance.now();
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => {
      this.failures = 0;
      this.heardAt = performance.now();
      this.handlers.onStatus?.("open");
      this.handlers.onOpen?.(this);
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return; // a socket we moved away from (moveTo): what it says is stale
      this.heardAt = performance.now();
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      const waiter = message.id !== undefined ? this.pending.get(message.id) : undefined;
      if (waiter) this.pending.delete(message.id);
      this.handlers.onMessage?.(message);
      waiter?.resolve(message);
    };
    ws.onclose = (event) => {
      if (this.ws === ws) this.dropped(event.code);
    };
  }

  /** The socket closed, or was given up on (``lost``): fail what waits, and come back. */
  dropped(code) {
    for (const waiter of this.pending.values()) waiter.reject(new Error("connection closed"));
    this.pending.clear();
    if (this.stopped || code === 4001) {
      // 4001: the same player signed in elsewhere; coming back would just steal it back.
      this.stopped = true;
      clearInterval(this.watch);
      clearTimeout(this.timer);
      this.watch = this.timer = null;
      this.handlers.onStatus?.("stopped");
      return;
    }
    this.handlers.onStatus?.("closed");
    this.url = this.home;
    const delay = BACKOFF_MS[Math.min(this.failures, BACKOFF_MS.length - 1)];
    this.failures += 1;
    this.timer = setTimeout(() => this.open(), delay);
  }

  get isOpen() {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** Send a request; resolves with its reply (the first message carrying its id). */
  request(message) {
    if (!this.isOpen) return Promise.reject(new Error("not connected"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const deadline = MAY_WAIT.has(message.type) ? Infinity : performance.now() + ANSWER_MS;
      this.pending.set(id, { resolve, reject, deadline });
      this.ws.send(JSON.stringify({ ...message, id }));
    });
  }

  /** Fire and forget (the reply still reaches onMessage). */
  send(message) {
    this.request(message).catch(() => {});
  }

  /** Carry on at another node's address: the old socket closes without a reconnection. */
  moveTo(url) {
    const old = this.ws;
    this.ws = null; // its close is not a drop
    for (const waiter of this.pending.values()) waiter.reject(new Error("connection moved"));
    this.pending.clear();
    old?.close();
    this.url = url;
    this.open();
  }

  /** Come back after a "replaced" stop, when the player asks for it. */
  resume() {
    this.stopped = false;
    this.failures = 0;
    clearTimeout(this.timer);
    this.startWatch();
    this.open();
  }
}
