// The browser client's entry point: identity (name once, token kept in storage), the
// connection and its resumption after a drop, routing every server message to its screen, and
// `app`, the actions the screens call. The state they share is state.js; the protocol is
// docs/protocol.md; the server decides everything.
import { card } from "./cards.js";
import { Connection } from "./connection.js";
import { initLobby, renderDaily, renderGames, renderRaces } from "./lobby.js";
import { RaceScreen } from "./race.js";
import { hideCountdown, initRoom, renderRoom, showCountdown } from "./room.js";
import { confirmRankedAttempt, isRankedAttempt } from "./daily.js";
import { clearPlay, gameName, state } from "./state.js";
import { storage } from "./storage.js";
import { banner, currentScreen, hideToast, showScreen, toast } from "./ui.js";
import { $ } from "./util.js";

const CANNOT_JOIN = new Set(["no_such_race", "race_started", "room_full"]);
const SLOW_DAILY_MS = 600; // a start_daily unanswered this long waits for its deal: say so
const MAX_FOLLOWS = 40; // race_elsewhere answers followed in a row (a race moving takes seconds)

/** A ghost link, /ghost/<race code>/<player id>: race that racer's recorded run. */
const ghostFromUrl = () => {
  const m = location.pathname.match(/^\/ghost\/([A-Za-z]{1,16})\/(\d{1,16})\/?$/);
  return m ? { code: m[1].toUpperCase(), player_id: Number(m[2]) } : null;
};
const joinFromUrl = () => location.pathname.match(/^\/join\/([A-Za-z-]{1,16})\/?$/)?.[1]?.toUpperCase() ?? null;

/** The actions the screens call; what they act on is `state`. */
const app = {
  conn: null,

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
    if (!remembered) state.follows = 0; // a join the player asked for: follow it afresh
    state.joining = true;
    const reply = await this.send({ type: "join_race", code });
    state.joining = false;
    if (reply?.type !== "error" || !CANNOT_JOIN.has(reply.code)) return;
    banner(""); // not reconnecting to it any more
    if (currentScreen() !== "race") this.leftRace();
    if (!remembered) toast(reply.message);
  },

  /** Practise against a finished race's recorded run ({code, player_id}); a refusal goes back to the lobby. */
  async raceGhost(ghost) {
    const reply = await this.send({ type: "race_ghost", ...ghost });
    if (reply?.type !== "room") this.showLobby();
  },

  /** Race this finished race's racers again: the room someone made already, or a new one. */
  rematch(sameDeal) {
    // The race's code too: its room may be gone from the server's memory (everyone left, a restart).
    const race = state.play.finished?.code ?? state.race?.code;
    this.send(race ? { type: "rematch", same_deal: sameDeal, race } : { type: "rematch", same_deal: sameDeal });
  },

  /** Today's challenge of ``game``, or practice of a past day's (``date``, YYYY-MM-DD). The
   * ranked attempt is confirmed first; a deal still being prepared says so while it waits. */
  async startDaily(game, date = null) {
    if (isRankedAttempt(game, date) && !(await confirmRankedAttempt(game))) return;
    let waited = false;
    const slow = setTimeout(() => {
      waited = true;
      toast(`Preparing today's ${gameName(game)} deal: it starts as soon as it is ready…`, "info", 60_000);
    }, SLOW_DAILY_MS);
    const reply = await this.send(date ? { type: "start_daily", game, date } : { type: "start_daily", game });
    clearTimeout(slow);
    if (waited && reply?.type !== "error") hideToast(); // it is ready
    if (reply?.type === "error" && reply.code === "not_found") this.send({ type: "daily" }); // shows it as preparing
  },

  async backToLobby() {
    if (state.race) await this.send({ type: "leave_race" });
    this.leftRace();
  },

  leftRace() {
    state.race = null;
    clearPlay();
    storage.remove("race");
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
  // Back in the race once its room comes (from its node, which may take a few seconds to
  // adopt it if the last one died): until then, say so.
  banner(state.race ? "Reconnecting to your race…" : "");
  conn.send({ type: "list_games" });
  const token = storage.get("token");
  if (token) conn.send({ type: "hello", token });
  else if (state.pendingName) conn.send({ type: "hello", name: state.pendingName });
  else showSignin();
}

function showSignin() {
  showScreen("signin");
  const code = joinFromUrl();
  $("#invite").textContent = code ? `You are invited to race ${code}. Pick a name to join.` : "";
  $("#name").value = storage.get("name") || "";
  $("#name").focus();
}

function onWelcome(m) {
  state.me = m.player;
  state.pendingName = null;
  if (m.token) storage.set("token", m.token);
  storage.set("name", m.player.name);
  storage.set("playerId", m.player.id); // the leaderboard page marks your row
  $("#who").textContent = m.player.name;
  $("#who").href = `/player/${m.player.id}`;
  $("#who").hidden = false;
  // Resume: the race in the address (a join link) or the one we were in before the drop.
  const ghost = ghostFromUrl();
  if (ghost) {
    history.replaceState(null, "", "/"); // once: the race it makes has its own address
    app.raceGhost(ghost);
    return;
  }
  const link = joinFromUrl();
  const remembered = state.race?.code || storage.get("race");
  if (link) app.joinRace(link, link === remembered);
  else if (remembered) app.joinRace(remembered, true);
  else app.showLobby();
}

function onRoom(m) {
  const r = m.race;
  if (state.race?.code === r.code && state.race.rematch && !r.rematch) r.rematch = state.race.rematch; // told once
  state.follows = 0; // arrived
  banner("");
  state.race = r;
  storage.set("race", r.code);
  if (location.pathname !== `/join/${r.code}`) history.replaceState(null, "", `/join/${r.code}`);
  if (r.status === "lobby" || r.status === "countdown") {
    renderRoom();
    showScreen("room");
    if (r.status === "lobby") hideCountdown();
  }
  race.onRoom(r);
}

function onRematchProposed(m) {
  if (state.race?.code !== m.race) return; // we moved on from that race
  state.race.rematch = { code: m.code, by: m.by, same_deal: m.same_deal };
  toast(`${m.by.name} proposes a rematch`, "info");
  race.showResults();
}

function onError(m) {
  switch (m.code) {
    case "bad_token":
      storage.remove("token");
      showSignin();
      toast("This browser's player is unknown to the server: pick a name again.");
      return;
    case "name_taken":
    case "bad_name":
      if (!state.me) {
        const typed = state.pendingName;
        state.pendingName = null; // not sent again on a reconnect
        showSignin();
        if (typed) $("#name").value = typed; // kept, to be changed rather than typed again
        $("#name").select();
        $("#signin-error").textContent = m.message.charAt(0).toUpperCase() + m.message.slice(1);
        return;
      }
      break;
    case "replaced":
      banner("You opened Solitaire Race in another tab or window.", { label: "Play here", onclick: () => app.conn.resume() });
      return;
    case "no_such_race":
    case "race_started":
    case "room_full":
      if (state.joining) return; // joinRace decides what to say
      break;
    case "not_in_race":
      if (currentScreen() !== "lobby") app.leftRace();
      return;
    case "race_elsewhere": // the race runs on another node: carry on there (docs/cluster.md)
      // Bounded: a node that just died is named until its lease runs out (seconds).
      if (++state.follows > MAX_FOLLOWS) break;
      storage.set("race", m.race); // once signed in there, onWelcome joins it
      // Only on this site (its proxy routes to every node): the page may connect nowhere else.
      if (m.url && new URL(m.url).host === location.host) app.conn.moveTo(m.url);
      else setTimeout(() => app.joinRace(m.race, true), 500); // moving: ask again shortly
      return;
    case "race_moved": // another node took the race over: join it again, wherever it is now
      if (state.race?.code) app.joinRace(state.race.code, true);
      return;
  }
  toast(m.message);
}

function handle(m) {
  switch (m.type) {
    case "welcome":
      return onWelcome(m);
    case "games":
      state.games = m.games;
      return renderGames(app, m.games);
    case "races":
      return renderRaces(app, m.races);
    case "daily_challenges":
      if (m.date === m.today) state.daily = m; // what isRankedAttempt reads
      return renderDaily(app, m);
    case "room":
      return onRoom(m);
    case "countdown":
      return showCountdown(m.starts_in_ms);
    case "race_started":
      hideCountdown();
      if (m.code) {
        storage.set("race", m.code);
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
      showScreen("race");
      return race.onFinished(m);
    case "rematch_proposed":
      return onRematchProposed(m);
    case "left":
      return; // backToLobby, the only sender of leave_race, moves on itself
    case "error":
      return onError(m);
  }
}

function onStatus(status) {
  document.body.dataset.connection = status;
  if (status === "closed") banner("Connection lost: reconnecting… Moves are not sent until it is back.");
}

$("#signin-form").onsubmit = (event) => {
  event.preventDefault();
  const name = $("#name").value.trim();
  if (!name) return;
  $("#signin-error").textContent = "";
  state.pendingName = name;
  if (app.conn.isOpen) app.conn.send({ type: "hello", name });
};
$("#results-btn").onclick = () => ($("#results").hidden = false);

$("#hero-cards").replaceChildren(...["AS", "KH", "QD", "JC", "TS"].map((code, i) => card(code, { style: { "--i": i } })));
initLobby(app);
initRoom(app);
showScreen("loading");
const scheme = location.protocol === "https:" ? "wss" : "ws";
app.conn = new Connection(`${scheme}://${location.host}/ws`, { onOpen, onMessage: handle, onStatus });
window.solitaireRace = state; // for the curious, in the browser console
