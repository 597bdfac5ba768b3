// The live racers panel: each racer's cards home, moves, outcome and time, best first. It
// draws state.play.racers (state.js merges what the server says about them), or, on the
// spectator page (watch.js), the racers that page keeps.
import { formatTime, OUTCOME_LABELS } from "./format.js";
import { state } from "./state.js";
import { h, playerLink } from "./util.js";

const MARKS = { won: "✓", stuck: "✗", resigned: "✗", timeout: "✗", left: "✗", interrupted: "✗" };

export class RacersPanel {
  /** racers: the map (player id → racer) to draw, read at each render. */
  constructor(el, racers = () => state.play.racers) {
    this.el = el;
    this.racers = racers;
  }

  sorted() {
    const finishedWin = (r) => (r.outcome === "won" ? 0 : 1);
    return [...this.racers().entries()].sort(
      ([, a], [, b]) =>
        finishedWin(a) - finishedWin(b) ||
        (a.outcome === "won" ? a.time_ms - b.time_ms : 0) ||
        (b.total ? b.home / b.total : 0) - (a.total ? a.home / a.total : 0) ||
        a.name.localeCompare(b.name),
    );
  }

  render() {
    const rows = this.sorted().map(([id, r], i) => {
      const known = r.total > 0; // a total of 0 means the server did not say (yet)
      const pct = known ? Math.round((100 * r.home) / r.total) : 0;
      const status =
        r.outcome === "playing"
          ? r.connected || r.ghost
            ? `${r.moves} moves`
            : "away…"
          : `${MARKS[r.outcome] || ""} ${OUTCOME_LABELS[r.outcome]}${r.time_ms !== null ? ` · ${formatTime(r.time_ms)}` : ""}`;
      return h(
        "li",
        {
          class: `racer outcome-${r.outcome}${r.me ? " me" : ""}${r.connected || r.ghost ? "" : " away"}${r.ghost ? " ghost" : ""}`,
          dataset: { playerId: String(id), outcome: r.outcome, home: String(r.home), moves: String(r.moves) },
        },
        h("span", { class: "place" }, String(i + 1)),
        h("span", { class: "racer-name" }, r.ghost ? r.name : playerLink(id, r.name, true), r.me ? h("small", {}, " (you)") : null, r.ghost ? h("small", {}, " (ghost)") : null),
        h("span", { class: "racer-home" }, known ? `${r.home}/${r.total}` : "—"),
        h("span", { class: "bar" }, h("span", { class: "fill", style: { width: `${pct}%` } })),
        h("span", { class: "racer-status" }, status, r.outcome === "playing" ? null : ` · ${r.moves} moves`),
      );
    });
    this.el.replaceChildren(h("h2", {}, "Racers"), h("ol", { class: "racers" }, rows));
  }
}
