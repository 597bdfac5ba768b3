// The replay page (/replay/<code>): a finished race played back from the server's replay
// (docs/protocol.md, replay_data), every racer's board side by side, in step on the race
// clock: play and pause, a move back or forward, a speed, and a scrubber over the race time.
// The boards are drawn by the games' own renderers from the views the replay's changes make;
// its buttons (redeal, stock) are drawn but do nothing here.
import { drawStill } from "./cards.js";
import { formatTime, outcomeLabel } from "./format.js";
import { rendererFor } from "./games/index.js";
import { storage } from "./storage.js";
import { $, h, playerLink } from "./util.js";
import { applyChanges } from "./view-changes.js";

// /replay/<race code>, or /replay/par/<game>/<date>: a daily challenge's par line.
const code = location.pathname.match(/^\/replay\/([A-Za-z]{1,16})\/?$/)?.[1]?.toUpperCase() ?? null;
const par = location.pathname.match(/^\/replay\/par\/([a-z0-9-]{1,32})\/(\d{4}-\d{2}-\d{2})\/?$/);
const TICK_MS = 50;

/** Each racer's views after 0, 1, 2... moves, and the race time of each move. */
function timeline(racer) {
  const views = [racer.view];
  for (const step of racer.steps) views.push(applyChanges(views[views.length - 1], step.changes));
  return { racer, views, times: racer.steps.map((s) => s.at_ms) };
}

/** How many of the racer's moves were made by race time ``ms``. */
function movesBy(line, ms) {
  let n = 0;
  while (n < line.times.length && line.times[n] <= ms) n += 1;
  return n;
}

/** The replay: over HTTP, or (a daily still being played, shown only to who played it) over
 * the websocket as this browser's player. */
async function load() {
  const res = await fetch(par ? `/api/replays/par/${par[1]}/${par[2]}` : `/api/replays/${code}`);
  const body = await res.json();
  if (res.ok) return body;
  const token = storage.get("token");
  if (body.error?.code !== "not_allowed" || !token) throw new Error(body.error?.message ?? res.statusText);
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/ws`);
  return new Promise((resolve, reject) => {
    // The token proves who asks, without a hello: signing in here would take the player's
    // connection over from the app's tab.
    ws.onopen = () => ws.send(JSON.stringify(par ? { type: "par_line", game: par[1], date: par[2], token, id: 2 } : { type: "replay", code, token, id: 2 }));
    ws.onmessage = (event) => {
      const m = JSON.parse(event.data);
      if (m.id !== 2) return;
      ws.close();
      if (m.type === "replay_data") resolve(m);
      else reject(new Error(m.message));
    };
    ws.onerror = () => reject(new Error("could not reach the server"));
  });
}

function show(data) {
  const lines = data.racers.map(timeline);
  const end = Math.max(0, ...lines.map((l) => l.times[l.times.length - 1] ?? 0), ...data.racers.map((r) => r.time_ms ?? 0));
  const renderer = rendererFor(data.game);
  const names = new Map();
  document.title = `Replay ${data.code} · Solitaire Race`;
  $("#replay-game").textContent = `Replay · ${data.game}`;
  fetch("/api/games").then((r) => r.json()).then((g) => {
    for (const game of g.games) names.set(game.id, game.name);
    $("#replay-game").textContent = `Replay · ${names.get(data.game) ?? data.game}`;
  });
  $("#replay-deal").textContent = data.code === null ? `daily ${data.daily_date} · the par line` : data.daily_date ? `daily ${data.daily_date}` : `deal ${data.deal} · race ${data.code}`;
  const scrub = $("#replay-scrub");
  scrub.max = String(end);
  const panels = lines.map((line) => {
    const r = line.racer;
    const status = h("span", { class: "replay-status" });
    const content = h("div", { class: "board-content" });
    const panel = h("section", { class: "replay-racer", dataset: { playerId: String(r.player_id) } },
      h("h2", {}, h("span", { class: "medal" }, String(r.rank)), " ", r.player_id ? playerLink(r.player_id, r.name) : r.name, " ", status,
        data.code ? h("a", { class: "race-ghost", href: `/ghost/${data.code}/${r.player_id}`, title: `race ${r.name}'s run on this deal (practice)` }, "Race this ghost") : null),
      h("div", { class: "board replay-board" }, content),
    );
    return { line, status, content, panel, shown: -1 };
  });
  $("#replay-boards").replaceChildren(...panels.map((p) => p.panel));
  $("#replay-boards").dataset.racers = String(panels.length);

  let at = 0;
  let playing = false;
  let last = 0;
  let timer = null;
  const draw = () => {
    scrub.value = String(at);
    $("#replay-time").textContent = formatTime(at);
    for (const p of panels) {
      const n = movesBy(p.line, at);
      if (n !== p.shown) {
        drawStill(p.content, renderer, p.line.views[n]);
        p.shown = n;
        p.panel.dataset.moves = String(n);
      }
      const r = p.line.racer;
      const over = n === p.line.times.length && (r.time_ms === null || at >= r.time_ms);
      p.status.textContent = over ? `${outcomeLabel(r.outcome)}${r.time_ms !== null ? ` · ${formatTime(r.time_ms)}` : ""} · ${r.moves} moves` : `${n} moves`;
    }
    $("#replay-play").textContent = playing ? "⏸ Pause" : "▶ Play";
    $("#replay-play").setAttribute("aria-label", playing ? "pause" : "play");
  };
  const pause = () => {
    playing = false;
    clearInterval(timer);
    timer = null;
    draw();
  };
  const play = () => {
    if (at >= end) at = 0;
    playing = true;
    last = performance.now();
    clearInterval(timer);
    timer = setInterval(() => {
      const now = performance.now();
      at = Math.min(end, at + (now - last) * Number($("#replay-speed").value));
      last = now;
      if (at >= end) pause();
      else draw();
    }, TICK_MS);
    draw();
  };
  /** To the previous or next move of any racer. */
  const stepTo = (direction) => {
    pause();
    const times = lines.flatMap((l) => l.times).sort((a, b) => a - b);
    const next = direction > 0 ? times.find((t) => t > at) : [...times].reverse().find((t) => t < at);
    at = next ?? (direction > 0 ? end : 0);
    draw();
  };
  $("#replay-play").onclick = () => (playing ? pause() : play());
  $("#replay-step").onclick = () => stepTo(1);
  $("#replay-back").onclick = () => stepTo(-1);
  scrub.oninput = () => {
    at = Number(scrub.value); // before pause(), which draws the scrubber where the replay was
    pause();
  };
  addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
    if (e.key === "ArrowRight") stepTo(1);
    else if (e.key === "ArrowLeft") stepTo(-1);
    else if (e.key === " ") {
      e.preventDefault();
      playing ? pause() : play();
    }
  });
  draw();
}

if (code === null && !par) {
  $("#replay-error").textContent = "No such page: a replay is /replay/<race code>.";
  $("#replay-error").hidden = false;
} else {
  load().then(show, (err) => {
    $("#replay-error").textContent = `This replay cannot be shown: ${err.message}`;
    $("#replay-error").hidden = false;
  });
}
