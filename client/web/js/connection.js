// The websocket connection: requests matched to replies by id, every message dispatched as an
// event, and automatic reconnection with backoff when the socket drops. `moveTo` carries on
// at another server node (where a race runs, docs/cluster.md); a drop comes back home, to
// the address the page started with, which brings the client to its race wherever it is.

const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];

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
    this.open();
  }

  open() {
    this.handlers.onStatus?.("connecting");
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => {
      this.failures = 0;
      this.handlers.onStatus?.("open");
      this.handlers.onOpen?.(this);
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return; // a socket we moved away from (moveTo): what it says is stale
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
      if (this.ws !== ws) return;
      for (const waiter of this.pending.values()) waiter.reject(new Error("connection closed"));
      this.pending.clear();
      if (this.stopped || event.code === 4001) {
        // 4001: the same player signed in elsewhere; coming back would just steal it back.
        this.stopped = true;
        this.handlers.onStatus?.("stopped");
        return;
      }
      this.handlers.onStatus?.("closed");
      this.url = this.home;
      const delay = BACKOFF_MS[Math.min(this.failures, BACKOFF_MS.length - 1)];
      this.failures += 1;
      this.timer = setTimeout(() => this.open(), delay);
    };
  }

  get isOpen() {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** Send a request; resolves with its reply (the first message carrying its id). */
  request(message) {
    if (!this.isOpen) return Promise.reject(new Error("not connected"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
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
    this.open();
  }
}
