// The end-of-race ranking, with links to the deal's leaderboard and the ways on.
import { earnsMedal, formatTime, OUTCOME, outcomeLabel, seriesLine } from "./format.js";
import { gameName, state } from "./state.js";
import { shareBox } from "./daily.js";
import { h, playerLink } from "./util.js";

/** A race against a recorded run: how mine compares, and where it would have ranked. */
function ghostLine(ghost, mine) {
  const theirs = ghost.outcome === OUTCOME.WON ? `won in ${formatTime(ghost.time_ms)}` : `${outcomeLabel(ghost.outcome)}, ${ghost.home}/${ghost.total} home`;
  let versus = "";
  if (mine?.outcome === OUTCOME.WON && ghost.outcome === OUTCOME.WON) {
    const diff = mine.time_ms - ghost.time_ms;
    versus = diff < 0 ? ` · you were ${formatTime(-diff)} faster` : diff > 0 ? ` · you were ${formatTime(diff)} slower` : " · a dead heat";
  }
  const where = ghost.board === "daily" ? `on the daily board of ${ghost.date}` : `in race ${ghost.code}`;
  return `Against ${ghost.name}'s run (${theirs})${versus} · you would have been #${ghost.would_rank} of ${ghost.of} ${where}`;
}

/** The rematch someone asked for after this race (the room's `rematch`), if any. */
const proposal = (m) => (state.race?.code === m.code ? state.race.rematch : null) ?? null;

function rematchOffer(m) {
  const offer = proposal(m);
  if (!offer) return null;
  const who = !offer.by ? "A rematch is waiting" : offer.by.id === state.me.id ? "You proposed a rematch" : `${offer.by.name} proposes a rematch`;
  const deal = offer.same_deal === undefined ? "" : offer.same_deal ? " on the same deal" : " on a new deal";
  return h("p", { class: "rematch-offer", id: "rematch-offer" }, `${who}${deal}.`);
}

/** One room for the whole group: the first to ask makes it, the others join it (docs/protocol.md, rematch). */
function rematchActions(m, app) {
  const offer = proposal(m);
  if (offer) {
    return [h("button", { type: "button", class: "primary", id: "join-rematch", onclick: () => app.joinRace(offer.code) }, "Join the rematch")];
  }
  return [
    h("button", { type: "button", class: "primary", id: "rematch-same", onclick: () => app.rematch(true) }, "Rematch: same deal"),
    h("button", { type: "button", id: "rematch-new", onclick: () => app.rematch(false) }, "Rematch: new deal"),
  ];
}

/** The ranking of a race_finished message; app: the actions of its buttons (main.js). */
export function renderResults(el, m, app, daily) {
  const me = state.me.id;
  const mine = m.ranking.find((r) => r.player_id === me);
  const solo = m.ranking.length === 1;
  const title = !mine
    ? "Race over"
    : solo
      ? mine.outcome === OUTCOME.WON
        ? `Solved in ${formatTime(mine.time_ms)}!`
        : `Game over: ${outcomeLabel(mine.outcome)}`
      : mine.rank === 1 && mine.outcome === OUTCOME.WON
        ? "You won the race!"
        : mine.outcome === OUTCOME.WON
          ? `You finished #${mine.rank}`
          : `Race over: you are #${mine.rank}`;
  const rows = m.ranking.map((r) =>
    h(
      "tr",
      { class: r.player_id === me ? "me" : "", dataset: { playerId: String(r.player_id), rank: String(r.rank) } },
      h("td", { class: "rank" }, h("span", { class: earnsMedal(r) ? `medal place-${r.rank}` : "medal" }, String(r.rank))),
      h("td", { class: "name" }, playerLink(r.player_id, r.name)),
      h(
        "td",
        { class: `outcome outcome-${r.outcome}` },
        outcomeLabel(r.outcome),
        // fair play (docs/fair-play.md): ranked here, on no public board until reviewed
        r.held ? h("small", { class: "held", title: "Held for review: not on the public boards until cleared" }, " · held for review") : null,
      ),
      h("td", { class: "time" }, formatTime(r.time_ms)),
      h("td", { class: "num" }, `${r.home}/${r.total}`),
      h("td", { class: "num" }, String(r.moves)),
    ),
  );
  const board = `/leaderboard?game=${encodeURIComponent(m.game)}&deal=${m.deal}`;
  const dailyBoard = daily ? `/leaderboard?game=${encodeURIComponent(m.game)}&board=daily&date=${daily.date}` : null;
  el.replaceChildren(
    h(
      "div",
      { class: "results-card" },
      h("h2", {}, title),
      h("p", { class: "sub" }, `${gameName(m.game)} · ${daily ? `daily ${daily.date}` : `deal ${m.deal}`}`),
      m.series ? h("p", { class: "series", id: "results-series" }, seriesLine(m.series)) : null,
      m.ghost ? h("p", { class: "series", id: "results-ghost" }, ghostLine(m.ghost, mine)) : null,
      h(
        "table",
        { class: "ranking" },
        h("thead", {}, h("tr", {}, ["#", "Racer", "Result", "Time", "Home", "Moves"].map((t) => h("th", {}, t)))),
        h("tbody", {}, rows),
      ),
      h(
        "div",
        { class: "results-actions" },
        dailyBoard ? h("a", { class: "button", href: dailyBoard, id: "daily-leaderboard" }, "Today's daily leaderboard") : null,
        h("a", { class: "button", href: board, id: "deal-leaderboard" }, "Leaderboard for this deal"),
        // practice (a past day's daily, a ghost) stores no result: nothing to replay
        m.ghost || daily?.practice ? null : h("a", { class: "button", href: `/replay/${m.code}`, id: "watch-replay", target: "_blank", rel: "noopener" }, "Watch the replay"),
      ),
      daily?.ranked && mine ? shareBox(m, daily, mine, app) : null,
      daily?.ranked && daily.par ? h("p", {}, h("a", { id: "par-line", href: `/replay/par/${encodeURIComponent(m.game)}/${daily.date}`, target: "_blank", rel: "noopener" }, `Watch the par line (${daily.par} moves)`)) : null,
      daily || m.ghost ? null : rematchOffer(m),
      h(
        "div",
        { class: "results-actions" },
        ...(daily || m.ghost ? [] : rematchActions(m, app)),
        h("button", { type: "button", onclick: () => app.backToLobby() }, "Back to lobby"),
        h("button", { type: "button", class: "quiet", onclick: () => (el.hidden = true) }, "Show the board"),
      ),
    ),
  );
}
