// The spectator page (/watch/<code>): a race's standings live (docs/protocol.md, watch_race),
// never a board: the server sends a spectator only what every racer is told. Once the race
// is over, the ranking and a link to its replay.
import { formatTime, OUTCOME_LABELS } from "./format.js";
import { RacersPanel } from "./opponents.js";
import { $, h, playerLink } from "./util.js";

const code = location.pathname.match(/^\/watch\/([A-Za-z-]{1,16})\/?$/)?.[1]?.toUpperCase() ?? null;
const racers = new Map(); // player id (0: a ghost) -> their progress fields
let clock = null; // {base: performance.now() at elapsed 0} while the race runs
let timer = null;
let names = new Map(); // game id -> name
let ws = null;

const panel = new RacersPanel($("#watch-racers"), () => racers);
const drawRacers = () => panel.render();

/** What the server says of a racer, merged into what the page knows (spectators see racers as connected). */
const told = (r) => racers.set(r.player_id, { connected: true, ...racers.get(r.player_id), ...r });

function drawRace(race) {
  $("#watch-title").textContent = `Watching ${names.get(race.game) ?? race.game}`;
  $("#watch-sub").textContent = `race ${race.code} · deal ${race.deal} · ${race.players.length} racer${race.players.length === 1 ? "" : "s"}`;
  $("#watch-status").textContent = { lobby: "Waiting for the start", countdown: "Starting…", running: "Race time", closing: "Over", finished: "Over" }[race.status] ?? race.status;
  if (race.status !== "running") stopClock();
  for (const p of race.players) if (!racers.has(p.id)) told({ player_id: p.id, name: p.name, home: 0, total: 0, moves: 0, outcome: "playing", time_ms: null });
  drawRacers();
}

function startClock(elapsedMs) {
  clock = { base: performance.now() - elapsedMs };
  clearInterval(timer);
  timer = setInterval(() => ($("#watch-time").textContent = formatTime(performance.now() - clock.base)), 100);
}

function stopClock() {
  clearInterval(timer);
  timer = null;
}

function finished(m) {
  stopClock();
  $("#watch-time").textContent = "";
  $("#watch-status").textContent = "Over";
  const rows = m.ranking.map((r) =>
    h("tr", {}, h("td", {}, String(r.rank)), h("td", {}, playerLink(r.player_id, r.name)), h("td", {}, OUTCOME_LABELS[r.outcome]), h("td", { class: "num" }, formatTime(r.time_ms)), h("td", { class: "num" }, `${r.home}/${r.total}`), h("td", { class: "num" }, String(r.moves))),
  );
  $("#watch-end").replaceChildren(
    h("h2", {}, "Ranking"),
    h("table", { class: "stats", id: "watch-ranking" }, h("thead", {}, h("tr", {}, ["#", "Racer", "Result", "Time", "Home", "Moves"].map((t) => h("th", {}, t)))), h("tbody", {}, rows)),
    h("p", {}, h("a", { class: "button", id: "watch-replay", href: `/replay/${m.code}` }, "Watch the replay: every board")),
  );
  $("#watch-end").hidden = false;
}

function handle(m) {
  switch (m.type) {
    case "watching":
      for (const r of m.racers) told(r);
      drawRace(m.race);
      if (m.elapsed_ms !== null) startClock(m.elapsed_ms);
      return;
    case "room":
      drawRace(m.race);
      // Just started: ask again for how everyone stands (their cards home at the deal) and the clock.
      if (m.race.status === "running" && !timer) ws.send(JSON.stringify({ type: "watch_race", code }));
      return;
    case "countdown":
      $("#watch-status").textContent = "Starting…";
      return;
    case "progress":
      told(m);
      return drawRacers();
    case "standings":
      m.racers.forEach(told);
      return drawRacers();
    case "race_finished":
      m.ranking.forEach(told);
      drawRacers();
      return finished(m);
    case "error":
      $("#watch-error").textContent = m.message;
  }
}

async function init() {
  if (code === null) {
    $("#watch-error").textContent = "No such page: a race is watched at /watch/<race code>.";
    return;
  }
  try {
    names = new Map((await (await fetch("/api/games")).json()).games.map((g) => [g.id, g.name]));
  } catch {
    // the ids will do
  }
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  ws = new WebSocket(`${scheme}://${location.host}/ws`);
  ws.onopen = () => ws.send(JSON.stringify({ type: "watch_race", code, id: 1 }));
  ws.onmessage = (event) => handle(JSON.parse(event.data));
  ws.onclose = () => {
    if ($("#watch-end").hidden) $("#watch-error").textContent = "The connection closed: reload the page to watch on.";
  };
}
init();
