// The spectator page (/watch/<code>): a race's standings live (docs/protocol.md, watch_race),
// never a board: the server sends a spectator only what every racer is told. Once the race
// is over, the ranking and a link to its replay. It connects as the app does (connection.js):
// after a drop it comes back and watches again, and in a cluster it follows the race to the
// node that runs it (race_elsewhere) and through a failover (race_moved). A race made with
// live boards (unranked) shows every racer's board too, drawn by the games' own renderers
// from the views `watching` gives and the `boards` changes after it.
import { drawStill } from "./cards.js";
import { Connection } from "./connection.js";
import { formatTime, OUTCOME, outcomeLabel } from "./format.js";
import { rendererFor } from "./games/index.js";
import { RacersPanel } from "./opponents.js";
import { $, h, playerLink } from "./util.js";
import { applyChanges } from "./view-changes.js";

const code = location.pathname.match(/^\/watch\/([A-Za-z-]{1,16})\/?$/)?.[1]?.toUpperCase() ?? null;
const racers = new Map(); // player id (0: a ghost) -> their progress fields
const boards = new Map(); // with live boards: player id -> {view, content}
let game = null; // the race's game id
let clock = null; // {base: performance.now() at elapsed 0} while the race runs
let timer = null;
let names = new Map(); // game id -> name
let conn = null;
let follows = 0; // race_elsewhere answers followed in a row
const MAX_FOLLOWS = 40; // as the app: a race moving to another node takes seconds

const panel = new RacersPanel($("#watch-racers"), () => racers);
const drawRacers = () => panel.render();

/** What the server says of a racer, merged into what the page knows (spectators see racers as connected). */
const told = (r) => racers.set(r.player_id, { connected: true, ...racers.get(r.player_id), ...r });

function drawRace(race) {
  game = race.game;
  $("#watch-title").textContent = `Watching ${names.get(race.game) ?? race.game}`;
  if (race.live_boards) $("#watch-note").textContent = "This race shows every racer's board as it is played (so it is unranked).";
  $("#watch-sub").textContent = `race ${race.code} · deal ${race.deal} · ${race.players.length} racer${race.players.length === 1 ? "" : "s"}`;
  $("#watch-status").textContent = { lobby: "Waiting for the start", countdown: "Starting…", running: "Race time", closing: "Over", finished: "Over" }[race.status] ?? race.status;
  if (race.status === "finished" && !race.players.length) $("#watch-status").textContent = "Everyone left before the start";
  if (race.status !== "running") stopClock();
  for (const p of race.players) if (!racers.has(p.id)) told({ player_id: p.id, name: p.name, home: 0, total: 0, moves: 0, outcome: OUTCOME.PLAYING, time_ms: null });
  drawRacers();
}

/** Every racer's board, from `watching` (a race with live boards). */
function drawBoards(list) {
  boards.clear();
  const panels = list.map((b) => {
    const content = h("div", { class: "board-content" });
    const name = racers.get(b.player_id)?.name ?? String(b.player_id);
    boards.set(b.player_id, { view: b.view, content });
    drawStill(content, rendererFor(game), b.view);
    return h("section", { class: "replay-racer", dataset: { playerId: String(b.player_id) } },
      h("h2", {}, playerLink(b.player_id, name)), h("div", { class: "board replay-board" }, content));
  });
  $("#watch-boards").replaceChildren(...panels);
  $("#watch-boards").dataset.racers = String(panels.length);
  $("#watch-boards").hidden = panels.length === 0;
}

/** A `boards` message: each changed board, redrawn. */
function changeBoards(list) {
  for (const { player_id: id, changes } of list) {
    const board = boards.get(id);
    if (!board) continue;
    try {
      board.view = applyChanges(board.view, changes);
    } catch {
      return watch(); // out of step: ask for every board again
    }
    drawStill(board.content, rendererFor(game), board.view);
  }
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
    h("tr", {}, h("td", {}, String(r.rank)), h("td", {}, playerLink(r.player_id, r.name)), h("td", {}, outcomeLabel(r.outcome)), h("td", { class: "num" }, formatTime(r.time_ms)), h("td", { class: "num" }, `${r.home}/${r.total}`), h("td", { class: "num" }, String(r.moves))),
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
      follows = 0;
      $("#watch-error").textContent = "";
      for (const r of m.racers) told(r);
      drawRace(m.race);
      if (m.boards) drawBoards(m.boards);
      if (m.elapsed_ms !== null) startClock(m.elapsed_ms);
      return;
    case "room":
      drawRace(m.race);
      // Just started: ask again for how everyone stands (their cards home at the deal) and the clock.
      if (m.race.status === "running" && !timer) watch();
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
    case "boards":
      return changeBoards(m.racers);
    case "race_finished":
      m.ranking.forEach(told);
      drawRacers();
      return finished(m);
    case "error":
      return failed(m);
  }
}

const watch = () => conn.send({ type: "watch_race", code });

function failed(m) {
  if (m.code === "race_elsewhere" && ++follows <= MAX_FOLLOWS) {
    // Only on this site (its proxy routes to every node): the page may connect nowhere else.
    if (m.url && new URL(m.url).host === location.host) conn.moveTo(m.url);
    else setTimeout(watch, 500); // moving to another node: ask again shortly
    return;
  }
  if (m.code === "race_moved") return; // this node lost the race and closes the connection: the reconnection watches again
  $("#watch-error").textContent = m.message;
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
  conn = new Connection(`${scheme}://${location.host}/ws`, {
    onOpen: watch,
    onMessage: handle,
    onStatus: (status) => {
      if (status === "closed" && $("#watch-end").hidden) $("#watch-error").textContent = "Connection lost: reconnecting…";
    },
  });
}
init();
