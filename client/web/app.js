// Minimal client: speaks the protocol in docs/protocol.md. The server decides everything.
const $ = (id) => document.getElementById(id);
const show = (id) => ["hello", "lobby", "room", "race"].forEach((s) => ($(s).hidden = s !== id));
const RED = new Set(["H", "D"]);
const label = (c) => (c ? (c[0] === "T" ? "10" : c[0]) + { S: "♠", H: "♥", D: "♦", C: "♣" }[c[1]] : "--");

let ws, me = null, nextId = 1;
const send = (msg) => ws.send(JSON.stringify({ id: nextId++, ...msg }));

function render(value) {
  if (typeof value === "string" && /^[A2-9TJQK][SHDC]$/.test(value)) return label(value);
  if (Array.isArray(value)) return value.map(render).join(" ");
  if (value && typeof value === "object") return Object.entries(value).map(([k, v]) => `${k}=${render(v)}`).join(", ");
  return String(value);
}
function drawBoard(view) {
  const lines = [];
  for (const [key, value] of Object.entries(view)) {
    if (key === "game") continue;
    if (Array.isArray(value) && value.length && typeof value[0] === "object")
      value.forEach((v, i) => lines.push(`${key} ${i + 1}: ${render(v)}`));
    else lines.push(`${key}: ${render(value)}`);
  }
  $("board").textContent = lines.join("\n");
}

function connect() {
  ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  ws.onopen = () => {
    const token = localStorage.getItem("token");
    const name = localStorage.getItem("name");
    if (token) send({ type: "hello", token });
    else if (name) send({ type: "hello", name });
    send({ type: "list_games" });
  };
  ws.onmessage = (ev) => handle(JSON.parse(ev.data));
  ws.onclose = () => setTimeout(connect, 1000);
}

function handle(m) {
  switch (m.type) {
    case "welcome":
      me = m.player;
      if (m.token) localStorage.setItem("token", m.token);
      localStorage.setItem("name", me.name);
      $("who").textContent = me.name;
      show("lobby");
      { const code = location.pathname.match(/^\/join\/(\w+)/); if (code) send({ type: "join_race", code: code[1] }); }
      break;
    case "games":
      $("game").replaceChildren(...m.games.map((g) => new Option(g.name, g.id)));
      break;
    case "room": {
      const r = m.race;
      if (r.status === "lobby" || r.status === "countdown") show("room");
      $("room-code").textContent = r.code;
      $("room-game").textContent = `${r.game}, deal ${r.deal}`;
      $("room-link").textContent = $("room-link").href = r.link;
      $("players").replaceChildren(...r.players.map((p) => Object.assign(document.createElement("li"), { textContent: `${p.name}${p.ready ? " ✓" : ""}${p.connected ? "" : " (away)"}` })));
      break;
    }
    case "countdown": $("countdown").textContent = `Starting in ${m.starts_in_ms / 1000} s`; break;
    case "race_started": show("race"); drawBoard(m.view); $("status").textContent = ""; break;
    case "move_result":
      drawBoard(m.view);
      $("status").textContent = m.rejected ? `✗ ${m.rejected.reason}` : `${m.progress.home}/${m.progress.total} home · ${m.moves} moves · ${m.outcome}`;
      break;
    case "progress": {
      let el = document.getElementById(`opp-${m.player_id}`);
      if (!el) { el = Object.assign(document.createElement("div"), { id: `opp-${m.player_id}` }); $("opponents").append(el); }
      el.textContent = `${m.name}: ${m.home}/${m.total} home, ${m.moves} moves, ${m.outcome}`;
      break;
    }
    case "race_finished":
      $("results").hidden = false;
      $("ranking").replaceChildren(...m.ranking.map((r) => Object.assign(document.createElement("li"), { textContent: `${r.name}: ${r.outcome}${r.time_ms != null ? ` in ${(r.time_ms / 1000).toFixed(1)} s` : ""}, ${r.home}/${r.total}, ${r.moves} moves` })));
      break;
    case "error":
      $("error").textContent = m.message;
      if (m.code === "bad_token") { localStorage.removeItem("token"); show("hello"); }
      setTimeout(() => ($("error").textContent = ""), 5000);
      break;
  }
}

$("hello-form").onsubmit = (e) => { e.preventDefault(); send({ type: "hello", name: $("name").value.trim() }); };
$("create-form").onsubmit = (e) => {
  e.preventDefault();
  const deal = $("deal").value === "" ? null : Number($("deal").value);
  send({ type: "create_race", game: $("game").value, deal, private: $("private").checked });
};
$("join-form").onsubmit = (e) => { e.preventDefault(); send({ type: "join_race", code: $("code").value }); };
$("ready").onclick = () => send({ type: "ready", ready: true });
$("start").onclick = () => send({ type: "start_race" });
$("move-form").onsubmit = (e) => { e.preventDefault(); send({ type: "move", moves: [$("move").value.trim()] }); $("move").value = ""; };
$("resign").onclick = () => send({ type: "resign" });
show("hello");
connect();
