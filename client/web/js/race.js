// The race screen: the board (drawn by the game's renderer from the server's view), the race
// bar (clock, cards home, moves, resign), the racers panel and the end-of-race ranking.
// Moves go to the server as {"type": "move"}; only its move_result changes the board. In an
// practice of a past day's daily challenge (the only place the server answers hints) a Hint button asks for
// the next move of a winning line and marks it on the board. The game itself is
// state.play (state.js); the clock ticks only while this screen is shown. The board is also
// played by keyboard (keyboard.js) and told to screen readers (announce.js).
import { announce, ProgressNotes } from "./announce.js";
import { formatTime, OUTCOME, outcomeLabel } from "./format.js";
import { attachGestures } from "./gestures.js";
import { attachKeyboard } from "./keyboard.js";
import { rendererFor } from "./games/index.js";
import { controlsFor, keysFor, PAR_TITLE, rulesUrl } from "./help.js";
import { celebrate, places, slide } from "./motion.js";
import { RacersPanel } from "./opponents.js";
import { renderResults } from "./results.js";
import { clearPlay, clockMs, gameName, gameSummary, myRacer, startPlay, state, updateConnections, updateRacer } from "./state.js";
import { currentScreen, onScreen, toast } from "./ui.js";
import { $, h } from "./util.js";
import { applyChanges } from "./view-changes.js";

const CONFIRM_MS = 3000;
const HINT_MS = 8000;
const TICK_MS = 100;

/** The renderer of the game on the race screen (null before the first race_started). */
const renderer = () => {
  const start = state.play.start;
  return start ? rendererFor(start.game) : null;
};

export class RaceScreen {
  /** @param {object} app the actions (main.js): send, joinRace, backToLobby, createRace */
  constructor(app) {
    this.app = app;
    this.board = $("#board");
    this.content = $("#board .board-content");
    this.panel = new RacersPanel($("#racers"));
    this.gestures = attachGestures(this.board, {
      moveFor: (src, dst) => renderer()?.moveFor(src, dst, state.play.view) ?? null,
      homeFor: (src) => renderer()?.homeFor(src, state.play.view) ?? null,
      play: (moves) => this.play(moves),
      hint: (text) => toast(text, "info", 2500),
    });
    this.keys = attachKeyboard(this.content, {
      gestures: this.gestures,
      renderer,
      view: () => state.play.view,
      announce,
      active: () => currentScreen() === "race" && state.play.outcome === OUTCOME.PLAYING && !!state.play.view,
    });
    this.notes = new ProgressNotes();
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
      if (event.key !== "Escape") return;
      this.gestures.clearSelection();
      this.keys.markPicked();
    });
    let clock = null;
    onScreen("race", {
      enter: () => {
        clearInterval(clock);
        clock = setInterval(() => this.tick(), TICK_MS);
        this.tick();
      },
      leave: () => {
        clearInterval(clock);
        clock = null;
        reset(); // a pending "Really resign?" is not carried to the next race
      },
    });
  }

  /** race_started: the start, or our game as it is now after a reconnect. */
  start(m) {
    startPlay(m);
    $("#results").hidden = true;
    $("#race-game").textContent = gameName(m.game);
    $("#race-rules").textContent = gameSummary(m.game);
    $("#race-controls").textContent = controlsFor(m.game);
    $("#race-keys").textContent = keysFor(m.game);
    $("#race-rules-link").href = rulesUrl(m.game);
    $("#race-deal").textContent = m.daily
      ? `daily ${m.daily.date} · ${m.daily.practice ? "practice, unranked" : m.daily.ranked ? "ranked" : "replay, unranked"}${m.daily.par ? ` · par ${m.daily.par}` : ""}`
      : `deal ${m.deal}`;
    $("#race-deal").title = m.daily?.par ? `deal ${m.deal}; ${PAR_TITLE}` : `deal ${m.deal}`;
    $("#race-par").textContent = m.daily?.par
      ? `Par ${m.daily.par}: the moves of the shortest winning line the server's solver found for this deal. ` +
        "Winning in par moves or fewer plays as well as the solver; the ranking is by time."
      : "";
    $("#race-par").hidden = !m.daily?.par;
    this.board.className = `board game-${m.game}`;
    this.notes.reset();
    this.keys.reset();
    const me = state.me;
    const game = renderer();
    updateRacer(me.id, {
      name: me.name,
      me: true,
      home: game.progress(m.view),
      total: game.total,
      moves: m.moves,
      outcome: m.outcome,
    });
    for (const o of m.opponents) {
      updateRacer(o.player_id, o);
      this.notes.note(o.player_id, state.play.racers.get(o.player_id));
    }
    const lost = !document.activeElement || document.activeElement === document.body;
    this.render();
    // the Start button is gone with the room: the keyboard goes on from the board
    if (lost) this.keys.focus();
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

  /** Send moves; only the server's move_result changes the board. Offline, nothing is sent
   * (and nothing is kept to send later: the position may have changed by then). */
  async play(moves) {
    if (!this.app.conn.isOpen) {
      toast("Offline: that move was not sent. Reconnecting…");
      return false;
    }
    try {
      const reply = await this.app.conn.request({ type: "move", moves });
      return reply.type === "move_result" && !reply.rejected;
    } catch {
      toast("The connection dropped before the server answered that move: once it is back, the board shows what the server has.");
      return false;
    }
  }

  /** Ask the server for a hint; show the move and mark where it starts and goes. */
  async askHint() {
    const button = $("#hint-btn");
    const play = state.play;
    const asked = play.moves;
    button.disabled = true; // the solver takes a moment: one question at a time
    const reply = await this.app.send({ type: "hint" });
    button.disabled = false;
    if (reply?.type !== "hint_result") return; // a refusal is shown by the dispatcher
    if (state.play !== play || play.moves !== asked) return; // a move was made meanwhile: the hint is for another position
    if (!reply.move) {
      toast(reply.message, "info", HINT_MS);
      return;
    }
    toast(`Hint: ${reply.move} (${reply.message})`, "info", HINT_MS);
    this.markHint(reply.move);
  }

  /** Outline the hinted move's source and target (or its button); the next render clears it. */
  markHint(move) {
    const zones = renderer()?.zonesOf?.(move);
    if (!zones) return; // a notation this renderer cannot place: the text says it all
    const mark = (selector, cls) => this.content.querySelector(selector)?.classList.add(cls);
    if (zones.button) mark(`[data-move="${zones.button}"]`, "hint-from");
    if (zones.src) mark(`[data-dst="${zones.src}"]`, "hint-from");
    if (zones.dst) mark(`[data-dst="${zones.dst}"]`, "hint-to");
  }

  onMoveResult(m) {
    const play = state.play;
    if (!play.start || !play.view) return;
    const before = play.view;
    try {
      play.view = applyChanges(play.view, m.changes);
    } catch (error) {
      // Out of step with the server (a bug): its race_started brings the whole view back.
      console.error(error);
      this.app.joinRace(play.start.code, true);
      return;
    }
    play.moves = m.moves;
    play.outcome = m.outcome;
    if (m.outcome !== OUTCOME.PLAYING) play.endedMs = m.elapsed_ms;
    updateRacer(state.me.id, {
      home: m.progress.home,
      total: m.progress.total,
      moves: m.moves,
      outcome: m.outcome,
      time_ms: m.outcome === OUTCOME.PLAYING ? null : m.elapsed_ms,
    });
    if (m.rejected) {
      toast(m.rejected.reason);
      this.board.classList.remove("shake");
      void this.board.offsetWidth; // restart the animation
      this.board.classList.add("shake");
    }
    if (m.applied.length) {
      this.tell(m, before);
      this.render(true);
    } else this.renderStats();
    if (m.outcome === OUTCOME.WON && m.applied.length) celebrate(this.board);
  }

  /** Tell a screen reader what my move did (and how my game ended). */
  tell(m, before) {
    const describe = renderer()?.describe;
    const said = m.applied.length === 1 && describe ? describe(m.applied[0], before, state.play.view) : null;
    const words = [said ?? `${m.applied.length === 1 ? "Move" : "Moves"} ${m.applied.join(", ")}.`];
    if (m.outcome === OUTCOME.WON) words.push("You won!");
    else if (m.outcome !== OUTCOME.PLAYING) words.push(`Your game is over: ${outcomeLabel(m.outcome)}.`);
    announce(words.join(" "));
  }

  onProgress(m) {
    const play = state.play;
    if (!play.start) return;
    const mine = m.player_id === state.me.id;
    if (mine) {
      play.outcome = m.outcome;
      if (m.time_ms !== null) play.endedMs = m.time_ms;
    }
    updateRacer(m.player_id, { ...m, me: mine });
    if (!mine) this.notes.note(m.player_id, state.play.racers.get(m.player_id));
    this.renderStats();
  }

  onRoom(race) {
    updateConnections(race.players);
    if (state.play.start) this.panel.render();
  }

  onFinished(m) {
    if (!state.play.start) {
      // a race that ended while we were away: only its ranking is left to show
      clearPlay();
      $("#race-game").textContent = gameName(m.game);
      $("#race-deal").textContent = m.daily ? `daily ${m.daily.date}` : `deal ${m.deal}`;
      this.content.replaceChildren();
    }
    const play = state.play;
    play.finished = m;
    for (const r of m.ranking) updateRacer(r.player_id, { ...r, me: r.player_id === state.me.id });
    const mine = m.ranking.find((r) => r.player_id === state.me.id);
    if (mine) {
      play.outcome = mine.outcome;
      play.endedMs = mine.time_ms;
    }
    this.renderStats();
    this.showResults();
  }

  /** The ranking, over the board (again, when a rematch is proposed). */
  showResults() {
    const m = state.play.finished;
    if (!m) return;
    const onBoard = this.keys.hasFocus();
    renderResults($("#results"), m, this.app, m.daily ?? state.play.start?.daily);
    $("#results").hidden = false;
    // the ranking covers the board: a keyboard player goes on from its first control
    if (onBoard) $("#results").querySelector("a, button")?.focus();
  }

  /** Draw the board from the view; ``moved``: after my moves, the cards slide (motion.js). */
  render(moved = false) {
    this.gestures.clearSelection();
    const before = moved ? places(this.content) : null;
    const focused = this.keys.hasFocus();
    this.content.replaceChildren(renderer().render(state.play.view, this.ui));
    this.keys.refresh(focused);
    if (before) slide(this.content, before);
    this.renderStats();
  }

  renderStats() {
    const play = state.play;
    const mine = myRacer();
    $("#race-home").textContent = mine ? `${mine.home}/${mine.total}` : "";
    $("#race-moves").textContent = String(play.moves ?? 0);
    const over = play.outcome && play.outcome !== OUTCOME.PLAYING;
    $("#resign-btn").hidden = over || !!play.finished;
    $("#hint-btn").hidden = !play.practice || over || !!play.finished;
    $("#results-btn").hidden = !play.finished;
    const status = $("#race-status");
    if (over && !play.finished) {
      const waiting = [...play.racers.values()].filter((r) => r.outcome === OUTCOME.PLAYING).length;
      const what = play.outcome === OUTCOME.WON ? "You won!" : `Your game is over: ${outcomeLabel(play.outcome)}.`;
      status.textContent = waiting ? `${what} Waiting for ${waiting} racer${waiting > 1 ? "s" : ""}…` : what;
      status.hidden = false;
    } else status.hidden = true;
    this.board.classList.toggle("game-over", !!over);
    this.panel.render();
    this.tick();
  }

  /** The race clock: my time once my game is over, the running time before. */
  tick() {
    const play = state.play;
    if (!(play.start || play.finished)) return;
    const ms = clockMs();
    $("#race-timer").textContent = formatTime(ms);
    const left = (play.start?.time_limit_s ?? Infinity) * 1000 - ms;
    $("#race-timer").classList.toggle("low", play.endedMs === null && left < 60_000);
  }
}
