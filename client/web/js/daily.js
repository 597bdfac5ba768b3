// The daily challenge as people know it from daily-challenge games: a confirmation before the
// one ranked attempt, the countdown to the next day's deals (midnight UTC), and a result line
// to paste to friends. The lobby lists the challenges (lobby.js); the server decides what is
// ranked (docs/daily-and-leaderboards.md).
import { formatTime, OUTCOME, outcomeLabel, vsPar } from "./format.js";
import { PAR_TITLE, rulesUrl } from "./help.js";
import { gameName, state } from "./state.js";
import { toast } from "./ui.js";
import { $, h } from "./util.js";

/** Milliseconds until the next UTC midnight, when the next daily challenges open. */
export function msToNextDay(now = Date.now()) {
  const next = new Date(now);
  next.setUTCHours(24, 0, 0, 0);
  return next.getTime() - now;
}

/** Is starting ``game``'s daily now the player's ranked attempt (today's deal, not tried yet)? */
export function isRankedAttempt(game, date) {
  if (date) return false; // a past day: practice
  const challenge = state.daily?.challenges?.find((c) => c.game === game);
  return !challenge?.attempted;
}

/** Ask before the one ranked attempt; resolves true to go ahead. */
export function confirmRankedAttempt(game) {
  const dialog = $("#confirm-daily");
  $("#confirm-daily-title").textContent = `Today's ${gameName(game)}: your ranked attempt`;
  $("#confirm-daily-text").textContent =
    "You get one ranked try at today's deal. The clock starts as soon as the cards appear and runs until you " +
    "win, get stuck, resign or run out of time, even if you close the page. Replays after it are just for fun.";
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener("close", () => resolve(dialog.returnValue === "start"), { once: true }));
}

/** The line a player pastes to friends after a daily attempt: game, day, result, moves
 * against par, streak. */
export function shareLine(finished, daily, mine, streak) {
  const parts = [`Solitaire Race · ${gameName(finished.game)} daily ${daily.date}`];
  if (mine.outcome === OUTCOME.WON) {
    const diff = daily.par ? vsPar(mine.moves, daily.par) : null;
    const par = diff === null ? "" : ` (par ${daily.par}${diff === "par" ? "" : `, ${diff}`})`;
    parts.push(`✓ solved in ${formatTime(mine.time_ms)}`, `${mine.moves} moves${par}`);
  } else {
    parts.push(`✗ ${outcomeLabel(mine.outcome)} · ${mine.home}/${mine.total} cards home`);
  }
  if (streak > 0) parts.push(`${streak}-day streak`);
  return parts.join(" · ");
}

/** The share box of a ranked daily attempt's results: the line, and a button to copy it. The
 * streak comes from the player's profile, asked for here (it counts today's attempt). */
export function shareBox(finished, daily, mine, app) {
  const text = h("p", { class: "share-line", id: "share-line" }, shareLine(finished, daily, mine, 0));
  const copy = h("button", { type: "button", id: "copy-result", class: "small" }, "Copy result");
  copy.onclick = async () => {
    try {
      await navigator.clipboard.writeText(text.textContent);
      toast("Result copied: paste it to your friends", "info", 2000);
    } catch {
      getSelection().selectAllChildren(text); // copy by hand
      toast("Select and copy the result line by hand", "info");
    }
  };
  app.send({ type: "profile" }).then((profile) => {
    if (profile?.type === "player_profile") text.textContent = shareLine(finished, daily, mine, profile.daily_streak);
  });
  // par, where it is shown, is explained (the rules page's "Par")
  const par = daily.par ? h("a", { class: "par-help", href: rulesUrl(finished.game, "par"), title: PAR_TITLE }, "what is par?") : null;
  return h("div", { class: "share-box" }, text, copy, par);
}
