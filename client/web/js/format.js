// Formatting shared by every page (the race screen, the results, the leaderboard page): no DOM.
// Every time the browser shows is written here (formatTime, formatCountdown), and the
// outcomes' values and labels are named here once.

const two = (n) => String(n).padStart(2, "0");
const hoursMinutesSeconds = (seconds) => `${Math.floor(seconds / 3600)}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;

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
  const seconds = Math.floor(total / 10);
  if (seconds >= 3600) return hoursMinutesSeconds(seconds);
  return `${Math.floor(seconds / 60)}:${two(seconds % 60)}.${total % 10}`;
}

/**
 * Milliseconds left as h:mm:ss, whatever the hours (the countdown to the next daily: "5:12:03",
 * "0:00:59"). Cut as formatTime cuts: each unit is the whole units left; below 0 is 0:00:00.
 */
export function formatCountdown(ms) {
  return hoursMinutesSeconds(Math.max(0, Math.floor(ms / 1000)));
}

/** A winner's moves against a par: "par" (as many), "+3" (more), "−1" (fewer: beat it). */
export function vsPar(moves, par) {
  const d = moves - par;
  return d === 0 ? "par" : d > 0 ? `+${d}` : `−${-d}`;
}

/** "KXPMRT" as "KXP MRT": easier to read aloud. */
export const spacedCode = (code) => `${code.slice(0, 3)} ${code.slice(3)}`;

/** Where a racer's game stands: the server's outcome values (RacerOutcome in
 * server/solitaire_race/results.py, test_outcomes.py checks they are the same), named once. */
export const OUTCOME = Object.freeze({
  PLAYING: "playing",
  WON: "won",
  STUCK: "stuck",
  RESIGNED: "resigned",
  TIMEOUT: "timeout",
  LEFT: "left",
  INTERRUPTED: "interrupted",
});

/** How each outcome is shown: the server's OUTCOME_LABELS (results.py), word for word. */
export const OUTCOME_LABELS = Object.freeze({
  [OUTCOME.PLAYING]: "playing",
  [OUTCOME.WON]: "won",
  [OUTCOME.STUCK]: "stuck",
  [OUTCOME.RESIGNED]: "resigned",
  [OUTCOME.TIMEOUT]: "out of time",
  [OUTCOME.LEFT]: "left",
  [OUTCOME.INTERRUPTED]: "interrupted",
});

/** An outcome's label; a value this page does not know (from a newer server) as it is, as the
 * server's outcome_label does. */
export const outcomeLabel = (outcome) => OUTCOME_LABELS[outcome] ?? outcome;

/** A place 1-3 earns a medal only with a game played: a win, or at least one move (a racer
 * who resigned or left without moving is ranked, but gets no medal). docs/fair-play.md. */
export const earnsMedal = (entry) => entry.rank <= 3 && (entry.outcome === OUTCOME.WON || entry.moves > 0);

/** A series of rematches (the `series` of a race summary or race_finished) in one line:
 * "Best of 3 · race 2 · ann 1 – bob 0", and who won it once it is decided. */
export function seriesLine(series) {
  const head = series.best_of ? `Best of ${series.best_of} · race ${series.number}` : `Race ${series.number} of the series`;
  const score = series.score.map((s) => `${s.name} ${s.wins}`).join(" – ");
  const champion = series.score.find((s) => s.player_id === series.champion);
  const end = !series.decided ? "" : champion ? ` · ${champion.name} wins the series!` : " · the series is tied";
  return `${head}${score ? ` · ${score}` : ""}${end}`;
}
