// The race screen: the board (drawn by the game's renderer from the server's view), the race
// bar (clock, cards home, moves, resign), the racers panel and the end-of-race ranking.
// Moves go to the server as {"type": "move"}; only its move_result changes the board. In an
// unranked daily replay (the only place the server answers hints) a Hint button asks for
// the next move of a winning line and marks it on the board.
import { attachGestures } from "./gestures.js";
import { RENDERERS } from "./games/index.js";
import { RacersPanel } from "./opponents.js";
import { renderResults } from "./results.js";
import { toast } from "./ui.js";
import { $, formatTime, h, OUTCOME_LABELS } from "./util.js";
import { applyChanges } from "./view-changes.js";

const CONFIRM_MS = 3000;
const HINT_MS = 8000;

// A game this page does not know yet (a newer server): say so rather than draw nonsense.
const UNKNOWN_GAME = {
  total: 0,
  render: () => h("p", { class: "race-status" }, "This page cannot draw this game yet: reload it to get the newest version."),
  moveFor: () => null,
  homeFor: () => null,
  zonesOf: () => null,
  progress: () => 0,
};

export class RaceScreen {
  constructor(app) {
    this.app = app;
    this.board = $("#board");
    this.content = $("#board .board-content");
    this.panel = new RacersPanel($("#racers"));
    this.view = null;
    this.renderer = null;
    this.gestures = attachGestures(this.board, {
      moveFor: (src, dst) => this.renderer?.moveFor(src, dst, this.view) ?? null,
      homeFor: (src) => this.renderer?.homeFor(src, this.view) ?? null,
      play: (moves) => this.play(moves),
      hint: (text) => toast(text, "info", 2500),
    });
    this.ui = { moveButton: (spec) => this.moveButton(spec) };
    const resign = $("#resign-btn");
    let unconfirm = null;
    const reset = () => {
      clearTimeout(unconfirm);
      delete resign.dataset.confirm;
      resign.textContent = "Resign";
    };
    resign.onclick = () => {
      // two clicks: a stray tap must not end someone's race
      if (resign.dataset.confirm) {
        reset();
        app.send({ type: "resign" });
      } else {
        resign.dataset.confirm = "1";
        resign.textContent = "Really resign?";
        unconfirm = setTimeout(reset, CONFIRM_MS);
      }
    };
    $("#hint-btn").onclick = () => this.askHint();
    $("#help-btn").onclick = () => {
      const help = $("#race-help");
      help.hidden = !help.hidden;
      $("#help-btn").setAttribute("aria-expanded", String(!help.hidden));
    };
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.gestures.clearSelection();
    });
    setInterval(() => this.tick(), 100);
  }

  /** race_started: the start, or our game as it is now after a reconnect. */
  start(m) {
    this.race = m;
    this.renderer = RENDERERS[m.game] ?? UNKNOWN_GAME;
    this.view = m.view;
    this.moves = m.moves;
    this.outcome = m.outcome;
    this.endedMs = null;
    this.clockBase = performance.now() - m.elapsed_ms;
    this.finished = null;
    this.practice = !!m.daily && !m.daily.ranked; // hints are answered only here
    $("#results").hidden = true;
    $("#race-game").textContent = this.app.gameName(m.game);
    $("#race-rules").textContent = this.app.games.find((g) => g.id === m.game)?.summary ?? "";
    $("#race-deal").textContent = m.daily
      ? `daily ${m.daily.date} · ${m.daily.ranked ? "ranked" : "replay, unranked"}${m.daily.par ? ` · par ${m.daily.par}` : ""}`
      : `deal ${m.deal}`;
    $("#race-deal").title = `deal ${m.deal}`;
    this.board.className = `board game-${m.game}`;
    this.panel.reset();
    const me = this.app.me;
    this.panel.update(me.id, {
      name: me.name,
      me: true,
      home: this.renderer.progress(m.view),
      total: this.renderer.total,
      moves: m.moves,
      outcome: m.outcome,
    });
    for (const o of m.opponents) this.panel.update(o.player_id, o);
    this.render();
  }

  get running() {
    return this.race && !this.finished;
  }

  moveButton({ label, detail, move, dim }) {
    return h(
      "button",
      {
        type: "button",
        class: `move-button${dim ? " dim" : ""}`,
        dataset: { move },
        onclick: () => this.play([move]),
      },
      h("span", {}, label),
      detail ? h("small", {}, detail) : null,
    );
  }

  async play(moves) {
    if (!this.app.conn.isOpen) {
      toast("Not connected: reconnecting…");
      return false;
    }
    const reply = await this.app.conn.request({ type: "move", moves });
    return reply.type === "move_result" && !reply.rejected;
  }

  /** Ask the server for a hint; show the move and mark where it starts and goes. */
  async askHint() {
    const button = $("#hint-btn");
    const asked = this.moves;
    button.disabled = true; // the solver takes a moment: one question at a time
    const reply = await this.app.send({ type: "hint" });
    button.disabled = false;
    if (reply?.type !== "hint_result") return; // a refusal is shown by the dispatcher
    if (this.moves !== asked) return; // a move was made meanwhile: the hint is for another position
    if (!reply.move) {
      toast(reply.message, "info", HINT_MS);
      return;
    }
    toast(`Hint: ${reply.move} (${reply.message})`, "info", HINT_MS);
    this.markHint(reply.move);
  }

  /** Outline the hinted move's source and target (or its button); the next render clears it. */
  markHint(move) {
    const zones = this.renderer.zonesOf?.(move);
    if (!zones) return; // a notation this renderer cannot place: the text says it all
    const mark = (selector, cls) => this.content.querySelector(selector)?.classList.add(cls);
    if (zones.button) mark(`[data-move="${zones.button}"]`, "hint-from");
    if (zones.src) mark(`[data-dst="${zones.src}"]`, "hint-from");
    if (zones.dst) mark(`[data-dst="${zones.dst}"]`, "hint-to");
  }

  onMoveResult(m) {
    if (!this.race || !this.view) return;
    try {
      this.view = applyChanges(this.view, m.changes);
    } catch (error) {
      // Out of step with the server (a bug): its race_started brings the whole view back.
      console.error(error);
      this.app.joinRace(this.race.code, true);
      return;
    }
    this.moves = m.moves;
    this.outcome = m.outcome;
    if (m.outcome !== "playing") this.endedMs = m.elapsed_ms;
    this.panel.update(this.app.me.id, {
      home: m.progress.home,
      total: m.progress.total,
      moves: m.moves,
      outcome: m.outcome,
      time_ms: m.outcome === "playing" ? null : m.elapsed_ms,
    });
    if (m.rejected) {
      toast(m.rejected.reason);
      this.board.classList.remove("shake");
      void this.board.offsetWidth; // restart the animation
      this.board.classList.add("shake");
    }
    if (m.applied.length) this.render();
    else this.renderStats();
  }

  onProgress(m) {
    if (!this.race) return;
    const mine = m.player_id === this.app.me.id;
    if (mine) {
      this.outcome = m.outcome;
      if (m.time_ms !== null) this.endedMs = m.time_ms;
    }
    this.panel.update(m.player_id, { ...m, me: mine });
    this.renderStats();
  }

  onRoom(race) {
    this.panel.connections(race.players);
    if (this.race) this.panel.render();
  }

  onFinished(m) {
    this.finished = m;
    if (!this.race) {
      // a race that ended while we were away: only its ranking is left to show
      $("#race-game").textContent = this.app.gameName(m.game);
      $("#race-deal").textContent = m.daily ? `daily ${m.daily.date}` : `deal ${m.deal}`;
      this.content.replaceChildren();
      this.panel.reset();
    }
    for (const r of m.ranking) this.panel.update(r.player_id, { ...r, me: r.player_id === this.app.me.id });
    const mine = m.ranking.find((r) => r.player_id === this.app.me.id);
    if (mine) {
      this.outcome = mine.outcome;
      this.endedMs = mine.time_ms;
    }
    this.renderStats();
    renderResults($("#results"), m, this.app, m.daily ?? this.race?.daily);
    $("#results").hidden = false;
  }

  render() {
    this.gestures.clearSelection();
    this.content.replaceChildren(this.renderer.render(this.view, this.ui));
    this.renderStats();
  }

  renderStats() {
    const mine = this.panel.racers.get(this.app.me.id);
    $("#race-home").textContent = mine ? `${mine.home}/${mine.total}` : "";
    $("#race-moves").textContent = String(this.moves ?? 0);
    const over = this.outcome && this.outcome !== "playing";
    $("#resign-btn").hidden = over || !!this.finished;
    $("#hint-btn").hidden = !this.practice || over || !!this.finished;
    $("#results-btn").hidden = !this.finished;
    const status = $("#race-status");
    if (over && !this.finished) {
      const waiting = [...this.panel.racers.values()].filter((r) => r.outcome === "playing").length;
      const what = this.outcome === "won" ? "You won!" : `Your game is over: ${OUTCOME_LABELS[this.outcome]}.`;
      status.textContent = waiting ? `${what} Waiting for ${waiting} racer${waiting > 1 ? "s" : ""}…` : what;
      status.hidden = false;
    } else status.hidden = true;
    this.board.classList.toggle("game-over", !!over);
    this.panel.render();
    this.tick();
  }

  tick() {
    if (!(this.race || this.finished) || document.body.dataset.screen !== "race") return;
    const ms = this.endedMs ?? (this.race ? Math.max(0, performance.now() - this.clockBase) : 0);
    $("#race-timer").textContent = formatTime(ms);
    const left = (this.race?.time_limit_s ?? Infinity) * 1000 - ms;
    $("#race-timer").classList.toggle("low", this.endedMs === null && left < 60_000);
  }
}
