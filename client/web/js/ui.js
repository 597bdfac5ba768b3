// Page-wide feedback: the toast (short messages such as a refused move's reason), the
// connection banner, and switching between screens.
import { $ } from "./util.js";

let toastTimer = null;
let toastCount = 0;

/** Show a message briefly. kind: "error" (a refusal) or "info". */
export function toast(text, kind = "error", ms = 3500) {
  const el = $("#toast");
  el.textContent = text;
  el.className = `toast show ${kind}`;
  el.dataset.seq = String(++toastCount); // tells a new message from one still showing
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (el.className = "toast"), ms);
}

export function banner(text, action = null) {
  const el = $("#banner");
  el.replaceChildren(text);
  if (action) {
    const button = document.createElement("button");
    button.textContent = action.label;
    button.onclick = action.onclick;
    el.append(" ", button);
  }
  el.hidden = !text;
}

export const SCREENS = ["loading", "signin", "lobby", "room", "race"];

export function showScreen(name) {
  if (document.body.dataset.screen !== name) $("#toast").className = "toast"; // old news
  for (const screen of SCREENS) $(`#screen-${screen}`).hidden = screen !== name;
  document.body.dataset.screen = name;
}
