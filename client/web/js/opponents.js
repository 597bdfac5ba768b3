// The live racers panel: each racer's cards home, moves, outcome and time, best first. It
// draws state.play.racers (state.js merges what the server says about them), or, on the
// spectator page (watch.js), the racers that page keeps.
import { formatTime, OUTCOME, outcomeLabel } from "./format.js";
import { state } from "./state.js";
import { h, playerLink } from "./util.js";

/** A won game's tick, any other ended game's cross. */
const mark = (outcome) => (outcome === OUTCOME.WON ? "✓" : "✗");

/**
 * A racer's place in the order, as a tuple compared part by part: it mirrors the server's
 * results.rank_key (server/solitaire_race/results.py), so the panel is in the order the ranking
 * will be. Won games first, by time, then fewer moves; then every other game (playing ones
 * too) by fewer cards left, then by time (a game still playing has none yet: after the ended
 * ones), then fewer moves. A total of 0 means the server did not say yet: last.
 */
function rankKey(r) {
  if (r.outcome === OUTCOME.WON) return [0, r.time_ms ?? 0, r.moves];
  return [1, r.total > 0 ? r.total - r.home : Infinity, r.time_ms ?? Infinity, r.moves];
}

/** Racers best first, in the ranking's order; ties by player id, as the server breaks them
 * (room/results.py), so the order never flickers between two redraws. ``entries``: [player
 * id, racer] pairs. */
export function byRank(entries) {
  const keys = new Map(entries.map(([id, r]) => [id, rankKey(r)]));
  return [...entries].sort(([ida, a], [idb, b]) => compareKeys(keys.get(ida), keys.get(idb)) || ida - idb);
}

/** Two keys compared as Python compares tuples: the first part that differs decides. */
function compareKeys(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length - b.length;
}

export class RacersPanel {
  /** racers: the map (player id → racer) to draw, read at each render. */
  constructor(el, racers = () => state.play.racers) {
    this.el = el;
    this.racers = racers;
  }

  sorted() {
    return byRank([...this.racers().entries()]);
  }

  render() {
    const rows = this.sorted().map(([id, r], i) => {
      const known = r.total > 0; // a total of 0 means the server did not say (yet)
      const pct = known ? Math.round((100 * r.home) / r.total) : 0;
      const status =
        r.outcome === OUTCOME.PLAYING
          ? r.connected || r.ghost
            ? `${r.moves} moves`
            : "away…"
          : `${mark(r.outcome)} ${outcomeLabel(r.outcome)}${r.time_ms !== null ? ` · ${formatTime(r.time_ms)}` : ""}`;
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
        h("span", { class: "racer-status" }, status, r.outcome === OUTCOME.PLAYING ? null : ` · ${r.moves} moves`),
      );
    });
    this.el.replaceChildren(h("h2", {}, "Racers"), h("ol", { class: "racers" }, rows));
  }
}
