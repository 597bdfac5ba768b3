// The rules pages: /rules/<game> (and /rules, the list of games). The text is the server's
// (GET /api/rules/<game>, from server/solitaire_race/game_rules.py, the one place it is
// written); the picture is a real position the server dealt, drawn by the race screen's own
// renderer (js/games/); the controls are js/help.js's, as the race screen's "?" shows them.
import { showOnly } from "./js/cards.js";
import { rendererFor } from "./js/games/index.js";
import { controlsFor, rulesUrl } from "./js/help.js";
import { storage } from "./js/storage.js";
import { $, h } from "./js/util.js";

const game = decodeURIComponent(location.pathname.replace(/^\/rules\/?/, "").split("/")[0] || "");

async function getJson(path) {
  const response = await fetch(path);
  const body = await response.json();
  if (!response.ok) throw new Error(body?.error?.message ?? `${response.status}`);
  return body;
}

/** The picture's board: the renderer's drawing, not playable (its buttons do nothing). */
function drawExample(rules) {
  const renderer = rendererFor(rules.game);
  const ui = {
    moveButton: ({ label, detail, move, dim }) =>
      h("button", { type: "button", class: `move-button${dim ? " dim" : ""}`, dataset: { move }, tabindex: -1 },
        h("span", {}, label), detail ? h("small", {}, detail) : null),
  };
  $("#board").className = `board game-${rules.game} example`;
  $("#board .board-content").replaceChildren(renderer.render(rules.example.view, ui));
  showOnly($("#board .board-content"));
  const moves = rules.example.moves;
  $("#rules-caption").textContent =
    `A real position: an example deal after ${moves.length} ${moves.length === 1 ? "move" : "moves"} (${moves.join(", ")}).`;
  $("#rules-figure").hidden = false;
}

function show(rules, games) {
  document.title = `${rules.name} rules · Solitaire Race`;
  $("#rules-name").textContent = `${rules.name}: the rules`;
  $("#rules-summary").textContent = rules.summary;
  $("#rules-sections").replaceChildren(
    ...rules.sections.flatMap((s) => [h("h2", {}, s.title), h("p", {}, s.text)]),
  );
  $("#rules-controls").textContent = controlsFor(rules.game);
  $("#rules-racing").textContent = rules.racing;
  $("#rules-par").textContent = rules.par;
  $("#rules-play").onclick = () => storage.set("lastGame", rules.game); // the lobby offers this game first
  $("#rules-text").hidden = false;
  drawExample(rules);
  if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
  nav(games);
}

function nav(games) {
  $("#rules-games").replaceChildren(
    ...games.map((g) =>
      h("a", { href: rulesUrl(g.id), class: g.id === game ? "current" : "", "aria-current": g.id === game ? "page" : null }, g.name),
    ),
  );
}

function index(games) {
  $("#rules-summary").textContent = "Choose a game to read its rules: the layout, the moves, redeals and how it is won.";
  $("#rules-index").replaceChildren(
    ...games.map((g) => h("li", {}, h("a", { href: rulesUrl(g.id) }, h("b", {}, g.name)), h("small", {}, g.summary))),
  );
  $("#rules-index").hidden = false;
  nav(games);
}

async function main() {
  try {
    const { games } = await getJson("/api/games");
    if (!game) index(games);
    else show(await getJson(`/api/rules/${encodeURIComponent(game)}`), games);
  } catch (error) {
    $("#rules-error").textContent = `Cannot show the rules: ${error.message}`;
  }
}

main();
