// Formatting shared by every page (the race screen, the results, the leaderboard page): no DOM.

/**
 * Milliseconds as m:ss.t, or h:mm:ss from one hour on; null or undefined as "—".
 *
 * One rule everywhere: the time is cut, never rounded up (a stopwatch's rule). Each unit shows
 * the whole units elapsed, so 59,999 ms is 0:59.9 and 60,000 ms is 1:00.0; a running clock
 * never shows a time not yet reached, and a finished race shows what its clock showed.
 */
export function formatTime(ms) {
  if (ms === null || ms === undefined) return "—";
  const total = Math.max(0, Math.floor(ms / 100)); // whole tenths
  const tenths = total % 10;
  const seconds = Math.floor(total / 10);
  const s = String(seconds % 60).padStart(2, "0");
  const minutes = Math.floor(seconds / 60);
  if (minutes >= 60) return `${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, "0")}:${s}`;
  return `${minutes}:${s}.${tenths}`;
}

/** "KXPMRT" as "KXP MRT": easier to read aloud. */
export const spacedCode = (code) => `${code.slice(0, 3)} ${code.slice(3)}`;

/** A place 1-3 earns a medal only with a game played: a win, or at least one move (a racer
 * who resigned or left without moving is ranked, but gets no medal). docs/fair-play.md. */
export const earnsMedal = (entry) => entry.rank <= 3 && (entry.outcome === "won" || entry.moves > 0);

/** A series of rematches (the `series` of a race summary or race_finished) in one line:
 * "Best of 3 · race 2 · ann 1 – bob 0", and who won it once it is decided. */
export function seriesLine(series) {
  const head = series.best_of ? `Best of ${series.best_of} · race ${series.number}` : `Race ${series.number} of the series`;
  const score = series.score.map((s) => `${s.name} ${s.wins}`).join(" – ");
  const champion = series.score.find((s) => s.player_id === series.champion);
  const end = !series.decided ? "" : champion ? ` · ${champion.name} wins the series!` : " · the series is tied";
  return `${head}${score ? ` · ${score}` : ""}${end}`;
}

export const OUTCOME_LABELS = {
  playing: "playing",
  won: "won",
  stuck: "stuck",
  resigned: "resigned",
  timeout: "out of time",
  left: "left",
  interrupted: "interrupted",
};
