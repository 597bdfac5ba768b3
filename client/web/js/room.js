// The race room before the start: join code and link to share, who is in, ready / start,
// and the countdown (its timer stops when the room is left).
import { seriesLine, spacedCode } from "./format.js";
import { localNotice, shareableLink } from "./invite.js";
import { gameName, state } from "./state.js";
import { onScreen, toast } from "./ui.js";
import { $, h, playerLink } from "./util.js";

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    toast(`${what} copied`, "info", 1500);
  } catch {
    toast(`Copy the ${what.toLowerCase()} by hand: ${text}`, "info");
  }
}

export function initRoom(app) {
  $("#copy-code").onclick = () => copy(state.race.code, "Code");
  $("#copy-link").onclick = () => copy(shareableLink(state.race.link).url, "Link");
  $("#copy-watch").onclick = () => copy(watchLink(), "Spectator link");
  $("#room-link").onfocus = (e) => e.target.select();
  if (navigator.share) {
    const share = $("#share-link");
    share.hidden = false;
    share.onclick = () => navigator.share({ title: "Solitaire Race", text: `Race me at ${gameName(state.race.game)}!`, url: shareableLink(state.race.link).url }).catch(() => {});
  }
  $("#ready-btn").onclick = () => {
    const me = state.race.players.find((p) => p.id === state.me.id);
    app.send({ type: "ready", ready: !me?.ready });
  };
  $("#start-btn").onclick = () => app.send({ type: "start_race" });
  $("#leave-btn").onclick = () => app.backToLobby();
  onScreen("room", { leave: hideCountdown });
}

/** The room as the latest room message says (state.race). */
/** Where anyone can watch the race's standings live (watch.js): the join link's site. */
const watchLink = () => shareableLink(state.race.link).url.replace(/\/join\/([A-Z]+)$/, "/watch/$1");

export function renderRoom() {
  const race = state.race;
  const me = state.me.id;
  $("#room-game").textContent = gameName(race.game);
  $("#room-deal").textContent = `deal ${race.deal} · ${race.private ? "private" : "public"} · ${Math.round(race.time_limit_s / 60)} min${race.live_boards ? " · live boards, unranked" : ""}`;
  $("#room-code").textContent = spacedCode(race.code);
  $("#room-code").dataset.code = race.code;
  const share = shareableLink(race.link);
  $("#room-link").value = share.url;
  $("#room-watch").href = watchLink();
  $("#room-local").replaceChildren(...(share.local ? localNotice() : []));
  $("#room-local").hidden = !share.local;
  $("#room-count").textContent = `${race.players.length}/${race.max_players}`;
  $("#room-series").hidden = !race.series;
  $("#room-series").textContent = race.series ? seriesLine(race.series) : "";
  $("#room-players").replaceChildren(
    ...race.players.map((p) =>
      h(
        "li",
        { class: `${p.ready ? "ready" : ""}${p.connected ? "" : " away"}`, dataset: { playerId: String(p.id) } },
        h("span", { class: "avatar" }, p.name.slice(0, 1).toUpperCase()),
        h("span", { class: "pname" }, playerLink(p.id, p.name, true), p.id === me ? h("small", {}, " (you)") : null, p.id === race.creator_id ? h("span", { class: "crown", title: "creator" }, " ♛") : null),
        h("span", { class: "pstate" }, p.ready ? "ready ✓" : p.connected ? "not ready" : "away"),
      ),
    ),
  );
  const mine = race.players.find((p) => p.id === me);
  const inLobby = race.status === "lobby";
  $("#ready-btn").textContent = mine?.ready ? "Not ready" : "I'm ready";
  $("#ready-btn").disabled = !inLobby;
  const creator = race.creator_id === me;
  $("#start-btn").hidden = !creator;
  $("#start-btn").disabled = !inLobby;
  $("#start-btn").textContent = race.players.length === 1 ? "Start solo" : "Start now";
  $("#room-hint").textContent = !inLobby
    ? "Get ready…"
    : race.players.length === 1
      ? "Share the code or the link; the race starts when everyone is ready, or when you start it."
      : creator
        ? "The race starts when everyone is ready, or when you start it."
        : "The race starts when everyone is ready, or when the creator starts it.";
}

let countdownTimer = null;

/** The big 3-2-1 over the page; race_started (or leaving) hides it. */
export function showCountdown(ms) {
  const el = $("#countdown");
  const end = performance.now() + ms;
  clearInterval(countdownTimer);
  const step = () => {
    const left = end - performance.now();
    el.textContent = left > 0 ? String(Math.ceil(left / 1000)) : "Go!";
    if (left <= -1500) hideCountdown(); // bounded even if race_started never comes
  };
  el.hidden = false;
  step();
  countdownTimer = setInterval(step, 100);
}

export function hideCountdown() {
  clearInterval(countdownTimer);
  $("#countdown").hidden = true;
}
