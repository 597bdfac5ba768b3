// What a screen reader is told as the race goes: one polite live region for my moves, the
// keyboard's answers and the opponents' progress. Errors the server gives are shown by the
// toast (ui.js), an alert that is read at once. Opponents are told sparingly: when they pass a
// quarter of their cards home and when their game ends, at most one progress note every few
// seconds, so the player's own moves are not drowned out.
import { formatTime, OUTCOME, outcomeLabel } from "./format.js";
import { h } from "./util.js";

const PROGRESS_GAP_MS = 5000;

let region = null;

/** Say `text` (politely: after what the screen reader is saying now). */
export function announce(text) {
  if (!region) {
    region = h("div", { id: "announcer", class: "sr-only", role: "status", "aria-live": "polite" });
    document.body.append(region);
  }
  // a new node each time, so the same words twice are said twice
  region.replaceChildren(h("p", {}, text));
}

/** The opponents' progress, told when it matters (see the top). */
export class ProgressNotes {
  constructor() {
    this.reset();
  }

  reset() {
    this.seen = new Map(); // player id → {quarter, outcome}
    this.lastAt = -Infinity;
  }

  /** A racer's progress (or ranking) arrived: tell it if it is news. */
  note(id, r) {
    const before = this.seen.get(id) ?? { quarter: 0, outcome: OUTCOME.PLAYING };
    const quarter = r.total ? Math.floor((4 * r.home) / r.total) : 0;
    this.seen.set(id, { quarter, outcome: r.outcome });
    if (r.outcome !== OUTCOME.PLAYING && before.outcome === OUTCOME.PLAYING) {
      const time = r.time_ms !== null && r.time_ms !== undefined ? ` in ${formatTime(r.time_ms)}` : "";
      announce(`${r.name}: ${outcomeLabel(r.outcome)}${r.outcome === OUTCOME.WON ? time : ""}.`);
      this.lastAt = performance.now();
    } else if (r.outcome === OUTCOME.PLAYING && quarter > before.quarter && performance.now() - this.lastAt > PROGRESS_GAP_MS) {
      announce(`${r.name}: ${r.home} of ${r.total} cards home.`);
      this.lastAt = performance.now();
    }
  }
}
