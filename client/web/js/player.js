// A player's page (/player/<id>): their stats per game, best times, latest races and daily
// streak, from the JSON API (GET /api/players/{id}, docs/protocol.md "player_profile").
// Every name in the app links here (playerLink). "My page" is the page of the player this
// browser remembers (storage.js).
import { formatTime, OUTCOME, outcomeLabel } from "./format.js";
import { storage } from "./storage.js";
import { $, h } from "./util.js";

const id = location.pathname.match(/^\/player\/(\d{1,16})\/?$/)?.[1] ?? null;

/** "3 days ago", "today": when a race finished, as people say it. */
function when(iso) {
  const days = Math.floor((Date.now() - Date.parse(iso)) / 86_400_000);
  return days <= 0 ? "today" : days === 1 ? "yesterday" : days < 30 ? `${days} days ago` : iso.slice(0, 10);
}

const percent = (rate) => `${Math.round(rate * 100)}%`;

function render(profile, names) {
  const me = String(storage.get("playerId") ?? "") === String(profile.player.id);
  const name = profile.player.name;
  document.title = `${name} · Solitaire Race`;
  $("#player-name").textContent = me ? `${name} (you)` : name;
  const races = profile.games.reduce((n, g) => n + g.games, 0);
  const wins = profile.games.reduce((n, g) => n + g.wins, 0);
  $("#player-summary").textContent = races
    ? `${races} ${races === 1 ? "race" : "races"} · ${wins} ${wins === 1 ? "win" : "wins"}`
    : "No races yet.";
  $("#streak").replaceChildren(
    h("li", {}, h("strong", {}, String(profile.daily_streak)), ` day${profile.daily_streak === 1 ? "" : "s"} daily streak`),
    h("li", {}, h("strong", {}, String(profile.daily_days)), ` day${profile.daily_days === 1 ? "" : "s"} of daily challenges`),
  );
  const gameName = (game) => names.get(game) ?? game;
  $("#game-stats tbody").replaceChildren(
    ...(profile.games.length
      ? profile.games.map((g) =>
          h("tr", { dataset: { game: g.game } },
            h("td", {}, h("a", { href: `/leaderboard?game=${encodeURIComponent(g.game)}&board=fastest` }, gameName(g.game))),
            h("td", { class: "num" }, String(g.games)),
            h("td", { class: "num" }, String(g.wins)),
            h("td", { class: "num" }, percent(g.win_rate)),
            h("td", { class: "num" }, formatTime(g.best_time_ms)),
            h("td", { class: "num" }, g.best_moves ?? "—"),
          ))
      : [h("tr", { class: "gap" }, h("td", { colspan: 6 }, "No races yet."))]),
  );
  $("#recent tbody").replaceChildren(
    ...(profile.recent.length
      ? profile.recent.map((r) => {
          const board = r.daily_date
            ? `/leaderboard?game=${encodeURIComponent(r.game)}&board=daily&date=${r.daily_date}`
            : `/leaderboard?game=${encodeURIComponent(r.game)}&deal=${r.deal}`;
          return h("tr", { dataset: { code: r.code } },
            h("td", { title: r.finished_at }, when(r.finished_at)),
            h("td", {}, gameName(r.game)),
            h("td", {}, h("a", { href: board }, r.daily_date ? `daily ${r.daily_date}` : `deal ${r.deal}`)),
            h("td", { class: "num" }, `${r.rank} of ${r.racers}`),
            h("td", { class: `outcome-${r.outcome}` }, outcomeLabel(r.outcome)),
            h("td", { class: "num" }, formatTime(r.outcome === OUTCOME.WON ? r.time_ms : null)),
            h("td", { class: "num" }, String(r.moves)),
            h("td", {}, h("a", { href: `/replay/${r.code}` }, "replay")),
          );
        })
      : [h("tr", { class: "gap" }, h("td", { colspan: 8 }, "No races yet."))]),
  );
}

async function init() {
  const mine = storage.get("playerId");
  if (mine) {
    $("#my-page").href = `/player/${mine}`;
    $("#my-page").hidden = String(mine) === id;
  }
  if (id === null) {
    $("#error").textContent = "No such page: a player's page is /player/<their id>.";
    return;
  }
  try {
    const [res, games] = await Promise.all([fetch(`/api/players/${id}`), fetch("/api/games")]);
    const profile = await res.json();
    if (!res.ok) {
      $("#player-name").textContent = "No such player";
      $("#error").textContent = profile.error?.message ?? res.statusText;
      return;
    }
    const names = new Map((await games.json()).games.map((g) => [g.id, g.name]));
    render(profile, names);
  } catch (err) {
    $("#error").textContent = `Could not reach the server (${err.message}).`;
  }
}
init();
