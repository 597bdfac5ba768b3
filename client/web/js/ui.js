// Page-wide feedback: the toast (short messages such as a refused move's reason), the
// connection banner, and switching between screens (each screen's enter and leave hooks).
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

/** Take a message down before its time (what it said is over). */
export function hideToast() {
  clearTimeout(toastTimer);
  $("#toast").className = "toast";
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

const screenHooks = new Map(); // screen → [{enter, leave}]

/**
 * Run enter() each time a screen is shown and leave() each time it is left: a screen starts
 * its repeating timers in enter and clears them in leave, so none runs behind another screen.
 */
export function onScreen(name, { enter = null, leave = null }) {
  if (!screenHooks.has(name)) screenHooks.set(name, []);
  screenHooks.get(name).push({ enter, leave });
}

export const currentScreen = () => document.body.dataset.screen;

export function showScreen(name) {
  const was = currentScreen();
  const changed = was !== name;
  if (changed) {
    $("#toast").className = "toast"; // old news
    for (const hook of screenHooks.get(was) ?? []) hook.leave?.();
  }
  for (const screen of SCREENS) $(`#screen-${screen}`).hidden = screen !== name;
  document.body.dataset.screen = name;
  if (changed) for (const hook of screenHooks.get(name) ?? []) hook.enter?.();
}
