// The lobby: create a race (game, deal: random, a number or today's daily; private; time
// limit; series; live boards), join by code, the public races open for joining, and the daily challenge per game.
// While the lobby is shown it refreshes the public races, counts down to the next daily (and
// asks for the new day's at midnight UTC), and asks again for a daily challenge still being
// prepared; every timer stops when it is left.
import { msToNextDay } from "./daily.js";
import { formatCountdown, spacedCode } from "./format.js";
import { PAR_TITLE, rulesUrl } from "./help.js";
import { gameName, state } from "./state.js";
import { storage } from "./storage.js";
import { currentScreen, onScreen } from "./ui.js";
import { $, h } from "./util.js";

const RACES_REFRESH_MS = 5000;
const DAILY_RETRY_MS = 5000;

let racesTimer = null;
let dailyRetry = null;
let nextDayTimer = null;
let dayShown = null; // the UTC day the countdown last counted to the end of

/** The countdown to the next daily; at midnight UTC, the new day's challenges are asked for. */
function showNextDay(app) {
  $("#daily-next").textContent = formatCountdown(msToNextDay());
  const today = new Date().toISOString().slice(0, 10);
  if (dayShown !== null && dayShown !== today && app.conn.isOpen) app.send({ type: "daily" });
  dayShown = today;
}

export function initLobby(app) {
  const form = $("#create-form");
  const dealKind = () => form.querySelector("input[name=deal-kind]:checked").value;
  const syncDeal = () => {
    const kind = dealKind();
    // dimmed, not disabled: clicking into it must still choose "Number"
    $("#deal-number").classList.toggle("inactive", kind !== "number");
    form.classList.toggle("daily-mode", kind === "daily");
    $("#create-btn").textContent = kind === "daily" ? "Play today's daily" : "Create race";
  };
  for (const radio of form.querySelectorAll("input[name=deal-kind]")) radio.onchange = syncDeal;
  $("#deal-number").onfocus = () => {
    form.querySelector("input[value=number]").checked = true;
    syncDeal();
  };
  syncDeal();
  form.onsubmit = (event) => {
    event.preventDefault();
    const game = form.querySelector("input[name=game]:checked")?.value;
    if (!game) return;
    const kind = dealKind();
    if (kind === "daily") {
      app.startDaily(game);
      return;
    }
    const deal = kind === "number" && $("#deal-number").value !== "" ? Number($("#deal-number").value) : null;
    app.createRace({
      game,
      deal,
      private: $("#private").checked,
      time_limit_s: Number($("#time-limit").value),
      best_of: $("#best-of").value ? Number($("#best-of").value) : null,
      live_boards: $("#live-boards").checked,
    });
  };
  $("#join-form").onsubmit = (event) => {
    event.preventDefault();
    const code = $("#join-code").value.trim();
    if (code) app.joinRace(code);
  };
  $("#refresh-races").onclick = () => app.send({ type: "list_races" });
  onScreen("lobby", {
    enter: () => {
      clearInterval(racesTimer);
      racesTimer = setInterval(() => {
        if (app.conn.isOpen && state.me) app.send({ type: "list_races" });
      }, RACES_REFRESH_MS);
      clearInterval(nextDayTimer);
      nextDayTimer = setInterval(() => showNextDay(app), 1000);
      showNextDay(app);
    },
    leave: () => {
      clearInterval(racesTimer);
      clearInterval(nextDayTimer);
      clearTimeout(dailyRetry);
      racesTimer = dailyRetry = nextDayTimer = null;
    },
  });
}

export function renderGames(app, games) {
  const tiles = $("#game-tiles");
  const chosen = tiles.querySelector("input:checked")?.value || storage.get("lastGame") || games[0]?.id;
  tiles.replaceChildren(
    ...games.map((g) =>
      h(
        "label",
        { class: "game-tile" },
        h("input", { type: "radio", name: "game", value: g.id, checked: g.id === chosen, onchange: () => storage.set("lastGame", g.id) }),
        h(
          "span",
          { class: "tile-body" },
          h("b", {}, g.name),
          h("small", {}, g.summary),
          h("a", { class: "tile-rules", href: rulesUrl(g.id), title: `the rules of ${g.name}, with a picture` }, "Rules"),
        ),
      ),
    ),
  );
  renderDaily(app, null);
}

/** The daily challenges (a daily_challenges message), or a plain list of games before it. */
export function renderDaily(app, daily) {
  // Only a fresh server is still choosing today's deals: ask again shortly (one timer at a
  // time, and only while the lobby is shown: coming back to it asks anyway).
  clearTimeout(dailyRetry);
  dailyRetry = null;
  if (daily?.challenges?.some((c) => c.preparing) && currentScreen() === "lobby")
    dailyRetry = setTimeout(() => app.send({ type: "daily" }), DAILY_RETRY_MS);
  const challenges = daily?.challenges ?? state.games.map((g) => ({ game: g.id, name: g.name }));
  const board = (game) => {
    const q = new URLSearchParams({ game, board: "daily" });
    if (daily?.date) q.set("date", daily.date);
    return `/leaderboard?${q}`;
  };
  $("#daily-date").textContent = daily?.date ? `· ${daily.date} (UTC)` : "";
  $("#daily-list").replaceChildren(
    ...challenges.map((c) =>
      h(
        "li",
        { dataset: { game: c.game } },
        h("span", { class: "daily-name" }, c.name ?? gameName(c.game), c.par ? h("small", {}, " · ", h("a", { class: "par", href: rulesUrl(c.game, "par"), title: PAR_TITLE }, `par ${c.par}`)) : null),
        c.attempted ? h("span", { class: "done", title: "your ranked attempt is used; you can still replay it" }, "✓ played") : null,
        c.preparing
          ? h("span", { class: "preparing", title: "the server is finding a winnable deal for today" }, "preparing…")
          : h(
              "button",
              { type: "button", class: `small${c.attempted ? "" : " primary"}`, dataset: { daily: c.game }, onclick: () => app.startDaily(c.game) },
              c.attempted ? "Replay" : "Play",
            ),
        // Yesterday's deal, to practise with hints (never ranked; today's deal gets none).
        c.practice_date
          ? h(
              "button",
              {
                type: "button", class: "small", dataset: { practice: c.game },
                title: `practise the deal of ${c.practice_date}: unranked, with hints`,
                onclick: () => app.startDaily(c.game, c.practice_date),
              },
              "Practise yesterday's",
            )
          : null,
        h("a", { href: board(c.game) }, "Leaderboard"),
      ),
    ),
  );
}

export function renderRaces(app, races) {
  const list = $("#open-races");
  if (!races.length) {
    list.replaceChildren(h("li", { class: "empty" }, "No public races right now. Create one and untick “private”."));
    return;
  }
  list.replaceChildren(
    ...races.map((r) =>
      h(
        "li",
        {},
        h("span", { class: "race-game" }, gameName(r.game)),
        h("span", { class: "race-who" }, `${r.players.map((p) => p.name).join(", ")} · ${r.players.length}/${r.max_players}${r.live_boards ? " · live boards, unranked" : ""}`),
        h("button", { type: "button", class: "small", onclick: () => app.joinRace(r.code) }, `Join ${spacedCode(r.code)}`),
      ),
    ),
  );
}
