// The leaderboard page: every board of the JSON API (docs/openapi.json), one page at a time.
// State lives in the URL (?game=&board=&date=&deal=&min_games=&page=&me=), so a board can be
// linked, e.g. from the end of a race: /leaderboard?game=cruel&deal=42. Times, storage and
// DOM helpers are the client's own (js/), so a time reads the same here as on the race screen.
import { earnsMedal, formatTime, OUTCOME, outcomeLabel, vsPar } from "./js/format.js";
import { PAR_TITLE, rulesUrl } from "./js/help.js";
import { storage } from "./js/storage.js";
import { $, h, playerLink } from "./js/util.js";

const params = new URLSearchParams(location.search);
const state = {
  game: params.get("game") || "perseverance",
  board: params.get("board") || (params.has("deal") ? "deal" : "daily"),
  date: params.get("date") || "",
  deal: params.get("deal") || "",
  min_games: params.get("min_games") || "10",
  page: Number(params.get("page") || 1),
  me: params.get("me") || storage.get("playerId") || "",
};
const PAGE_SIZE = 20;

function columns(board, par) {
  if (board === "deal" || board === "daily")
    return [["#", (e) => e.rank, (e) => (earnsMedal(e) ? `medal medal-${e.rank}` : "")], ["Player", (e) => playerLink(e.player_id, e.name)], ["Result", (e) => outcomeLabel(e.outcome), (e) => (e.outcome === OUTCOME.WON ? "won" : "")],
            ["Time", (e) => formatTime(e.outcome === OUTCOME.WON ? e.time_ms : null), null, "num"], ["Moves", (e) => e.moves, null, "num"],
            ...(par != null ? [[`vs par ${par}`, (e) => (e.outcome === OUTCOME.WON ? vsPar(e.moves, par) : ""), null, "num"]] : []),
            ["Cards home", (e) => `${e.home}/${e.total}`, null, "num opt"],
            ["Replay", (e) => (e.race_code ? h("a", { href: `/replay/${e.race_code}`, class: "replay-link" }, "▶ watch") : ""), null, "opt"]];
  const base = [["#", (e) => e.rank, (e) => (e.rank <= 3 ? `medal medal-${e.rank}` : "")], ["Player", (e) => playerLink(e.player_id, e.name)]];
  if (board === "fastest") return [...base, ["Best time", (e) => formatTime(e.time_ms), null, "num"], ["Moves", (e) => e.moves, null, "num"], ["Wins", (e) => e.wins, null, "num opt"]];
  if (board === "wins") return [...base, ["Wins", (e) => e.wins, null, "num"], ["Games", (e) => e.games, null, "num"], ["Best time", (e) => formatTime(e.time_ms), null, "num opt"]];
  return [...base, ["Win rate", (e) => `${Math.round(e.win_rate * 100)}%`, null, "num"], ["Wins", (e) => e.wins, null, "num"], ["Games", (e) => e.games, null, "num"]];
}

function row(entry, cols, mine) {
  return h(
    "tr",
    { class: mine ? "me" : null },
    cols.map(([, value, cls, align]) => h("td", { class: [align, cls && cls(entry)].filter(Boolean).join(" ") }, value(entry))),
  );
}

/** A row across the table that says something instead of a result. */
const note = (text, cols) => h("tr", { class: "gap" }, h("td", { colspan: cols.length }, text));

function syncControls() {
  $("#game").value = state.game;
  for (const b of $("#boards").querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.board === state.board)); // toggle buttons: no tab panels
  $("#daily-controls").hidden = state.board !== "daily";
  $("#deal-controls").hidden = state.board !== "deal";
  $("#rate-controls").hidden = state.board !== "win_rate";
  $("#date").value = state.date;
  $("#deal").value = state.deal;
  $("#min-games").value = state.min_games;
}

async function load() {
  syncControls();
  const q = new URLSearchParams({ page: state.page, page_size: PAGE_SIZE });
  if (state.me) q.set("me", state.me);
  if (state.board === "daily" && state.date) q.set("date", state.date);
  if (state.board === "deal") { if (state.deal === "") { show(null, "Enter a deal number."); return; } q.set("deal", state.deal); }
  if (state.board === "win_rate") q.set("min_games", state.min_games);
  const url = new URLSearchParams({ game: state.game, board: state.board, page: state.page });
  for (const k of ["date", "deal"]) if (state[k] && (k === "date" ? state.board === "daily" : state.board === "deal")) url.set(k, state[k]);
  if (state.board === "win_rate") url.set("min_games", state.min_games);
  history.replaceState(null, "", `/leaderboard?${url}`);
  try {
    const res = await fetch(`/api/leaderboard/${state.board}/${encodeURIComponent(state.game)}?${q}`);
    const data = await res.json();
    if (!res.ok) { show(null, data.error?.message || res.statusText); return; }
    if (data.date && !state.date) { state.date = data.date; $("#date").value = data.date; }
    show(data, "");
  } catch (err) {
    show(null, `Could not reach the server (${err.message}).`);
  }
}

function show(data, error) {
  $("#error").textContent = error;
  $("#rows").replaceChildren();
  $("#head").replaceChildren();
  if (!data) { $("#summary").textContent = ""; $("#pager").hidden = true; return; }
  const cols = columns(data.board, data.par);
  for (const [title, , , align] of cols) $("#head").append(h("th", { class: align || "", text: title }));
  const me = data.me?.player_id;
  for (const e of data.entries) $("#rows").append(row(e, cols, e.player_id === me));
  if (data.me && !data.entries.some((e) => e.player_id === me)) $("#rows").append(note("⋯ your place ⋯", cols), row(data.me, cols, true));
  if (!data.entries.length && !data.me) $("#rows").append(note("No results yet: be the first!", cols));
  const name = $("#game").selectedOptions[0]?.textContent || data.game;
  const what = { daily: `daily challenge of ${data.date}`, deal: `deal ${data.deal}`, fastest: "fastest wins",
                 wins: "most wins", win_rate: `win rate, at least ${data.min_games} games` }[data.board];
  const par = data.par != null ? ` · par ${data.par} moves` : "";
  $("#summary").textContent = `${name}: ${what}${par} · ${data.total} ${data.total === 1 ? "player" : "players"}`;
  if (par) $("#summary").append(" · ", h("a", { href: rulesUrl(data.game, "par"), title: PAR_TITLE }, "what is par?"));
  const pages = Math.max(1, Math.ceil(data.total / data.page_size));
  $("#pager").hidden = pages <= 1;
  $("#page-label").textContent = `page ${data.page} of ${pages}`;
  $("#prev-page").disabled = data.page <= 1;
  $("#next-page").disabled = data.page >= pages;
}

function shiftDate(days) {
  const d = new Date(`${state.date || new Date().toISOString().slice(0, 10)}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  state.date = d.toISOString().slice(0, 10);
  state.page = 1;
  load();
}

async function init() {
  const mine = storage.get("playerId");
  if (mine) {
    $("#my-page").href = `/player/${mine}`;
    $("#my-page").hidden = false;
  }
  const games = (await (await fetch("/api/games")).json()).games;
  $("#game").replaceChildren(...games.map((g) => new Option(g.name, g.id)));
  if (!games.some((g) => g.id === state.game)) state.game = games[0].id;
  $("#game").onchange = () => { state.game = $("#game").value; state.page = 1; load(); };
  for (const b of $("#boards").querySelectorAll("button"))
    b.onclick = () => { state.board = b.dataset.board; state.page = 1; load(); };
  $("#date").onchange = () => { state.date = $("#date").value; state.page = 1; load(); };
  $("#prev-day").onclick = () => shiftDate(-1);
  $("#next-day").onclick = () => shiftDate(1);
  $("#deal").onchange = () => { state.deal = $("#deal").value; state.page = 1; load(); };
  $("#min-games").onchange = () => { state.min_games = $("#min-games").value || "10"; state.page = 1; load(); };
  $("#prev-page").onclick = () => { state.page -= 1; load(); };
  $("#next-page").onclick = () => { state.page += 1; load(); };
  $("#controls").onsubmit = (e) => e.preventDefault();
  load();
}
init();
