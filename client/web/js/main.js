// The browser client's entry point: identity (name once, token kept in localStorage), the
// connection and its resumption after a drop, and routing every server message to its screen.
// The protocol is docs/protocol.md; the server decides everything.
import { Connection } from "./connection.js";
import { initLobby, renderDaily, renderGames, renderRaces } from "./lobby.js";
import { RaceScreen } from "./race.js";
import { hideCountdown, initRoom, renderRoom, showCountdown } from "./room.js";
import { banner, showScreen, toast } from "./ui.js";
import { card } from "./cards.js";
import { $ } from "./util.js";

const TOKEN_KEY = "solitaireRace.token";
const NAME_KEY = "solitaireRace.name";
const RACE_KEY = "solitaireRace.race"; // the code of the race we are in, to resume it

const CANNOT_JOIN = new Set(["no_such_race", "race_started", "room_full"]);

const joinFromUrl = () => location.pathname.match(/^\/join\/([A-Za-z-]{1,16})\/?$/)?.[1]?.toUpperCase() ?? null;

const app = {
  conn: null,
  me: null,
  games: [],
  race: null, // the latest race summary from a room message
  pendingName: null,
  joining: false, // a join_race is waiting for its answer

  gameName(id) {
    return this.games.find((g) => g.id === id)?.name ?? id;
  },

  /** Send a request; an error reply is shown as a toast by the dispatcher. */
  send(message) {
    if (!this.conn.isOpen) {
      toast("Not connected: reconnecting…");
      return Promise.resolve(null);
    }
    return this.conn.request(message).catch(() => null);
  },

  createRace(fields) {
    const message = { type: "create_race" };
    for (const [k, v] of Object.entries(fields)) if (v !== null && v !== undefined) message[k] = v;
    this.send(message);
  },

  /** Join (or come back to) a race; a code that cannot be joined leads back to the lobby.
   * remembered: the code is the one we were in before (no complaint if it is gone). */
  async joinRace(code, remembered = false) {
    this.joining = true;
    const reply = await this.send({ type: "join_race", code });
    this.joining = false;
    if (reply?.type !== "error" || !CANNOT_JOIN.has(reply.code)) return;
    if (document.body.dataset.screen !== "race") this.leftRace();
    if (!remembered) toast(reply.message);
  },

  startDaily(game) {
    this.send({ type: "start_daily", game });
  },

  async backToLobby() {
    if (this.race) await this.send({ type: "leave_race" });
    this.leftRace();
  },

  leftRace() {
    this.race = null;
    localStorage.removeItem(RACE_KEY);
    hideCountdown();
    if (location.pathname !== "/") history.replaceState(null, "", "/");
    this.showLobby();
  },

  showLobby() {
    showScreen("lobby");
    this.send({ type: "list_races" });
    this.send({ type: "daily" });
    if (location.hash === "#daily") $("#daily").scrollIntoView();
  },
};

const race = new RaceScreen(app);

function onOpen(conn) {
  banner("");
  conn.send({ type: "list_games" });
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) conn.send({ type: "hello", token });
  else if (app.pendingName) conn.send({ type: "hello", name: app.pendingName });
  else showSignin();
}

function showSignin() {
  showScreen("signin");
  const code = joinFromUrl();
  $("#invite").textContent = code ? `You are invited to race ${code}. Pick a name to join.` : "";
  $("#name").value = localStorage.getItem(NAME_KEY) || "";
  $("#name").focus();
}

function onWelcome(m) {
  app.me = m.player;
  if (m.token) localStorage.setItem(TOKEN_KEY, m.token);
  localStorage.setItem(NAME_KEY, m.player.name);
  localStorage.setItem("playerId", String(m.player.id)); // the leaderboard page marks your row
  app.pendingName = null;
  $("#who").textContent = m.player.name;
  $("#who").hidden = false;
  // Resume: the race in the address (a join link) or the one we were in before the drop.
  const link = joinFromUrl();
  const remembered = app.race?.code || localStorage.getItem(RACE_KEY);
  if (link) app.joinRace(link, link === remembered);
  else if (remembered) app.joinRace(remembered, true);
  else app.showLobby();
}

function onRoom(m) {
  const r = m.race;
  app.race = r;
  localStorage.setItem(RACE_KEY, r.code);
  if (location.pathname !== `/join/${r.code}`) history.replaceState(null, "", `/join/${r.code}`);
  if (r.status === "lobby" || r.status === "countdown") {
    renderRoom(app, r);
    showScreen("room");
    if (r.status === "lobby") hideCountdown();
  }
  race.onRoom(r);
}

function onError(m) {
  switch (m.code) {
    case "bad_token":
      localStorage.removeItem(TOKEN_KEY);
      showSignin();
      toast("This browser's player is unknown to the server: pick a name again.");
      return;
    case "name_taken":
    case "bad_name":
      if (!app.me) {
        showSignin();
        $("#signin-error").textContent = m.message;
        return;
      }
      break;
    case "replaced":
      banner("You opened Solitaire Race in another tab or window.", { label: "Play here", onclick: () => app.conn.resume() });
      return;
    case "no_such_race":
    case "race_started":
    case "room_full":
      if (app.joining) return; // joinRace decides what to say
      break;
    case "not_in_race":
      if (document.body.dataset.screen !== "lobby") app.leftRace();
      return;
  }
  toast(m.message);
}

function handle(m) {
  switch (m.type) {
    case "welcome":
      return onWelcome(m);
    case "games":
      app.games = m.games;
      return renderGames(app, m.games);
    case "races":
      return renderRaces(app, m.races);
    case "daily_challenges":
      return renderDaily(app, m);
    case "room":
      return onRoom(m);
    case "countdown":
      return showCountdown(m.starts_in_ms);
    case "race_started":
      hideCountdown();
      if (m.code) {
        localStorage.setItem(RACE_KEY, m.code);
        if (location.pathname !== `/join/${m.code}`) history.replaceState(null, "", `/join/${m.code}`);
      }
      showScreen("race");
      return race.start(m);
    case "move_result":
      return race.onMoveResult(m);
    case "progress":
      return race.onProgress(m);
    case "standings": // the racers who moved since the last one, a few times a second
      return m.racers.forEach((r) => race.onProgress(r));
    case "race_finished":
      if (document.body.dataset.screen !== "race") showScreen("race");
      return race.onFinished(m);
    case "left":
      return; // backToLobby, the only sender of leave_race, moves on itself
    case "error":
      return onError(m);
  }
}

function onStatus(status) {
  document.body.dataset.connection = status;
  if (status === "closed") banner("Connection lost. Reconnecting…");
}

$("#signin-form").onsubmit = (event) => {
  event.preventDefault();
  const name = $("#name").value.trim();
  if (!name) return;
  $("#signin-error").textContent = "";
  app.pendingName = name;
  if (app.conn.isOpen) app.conn.send({ type: "hello", name });
};
$("#results-btn").onclick = () => ($("#results").hidden = false);

$("#hero-cards").replaceChildren(...["AS", "KH", "QD", "JC", "TS"].map((code, i) => card(code, { style: { "--i": i } })));
initLobby(app);
initRoom(app);
showScreen("loading");
const scheme = location.protocol === "https:" ? "wss" : "ws";
app.conn = new Connection(`${scheme}://${location.host}/ws`, { onOpen, onMessage: handle, onStatus });
window.solitaireRace = app; // for the curious, in the browser console
