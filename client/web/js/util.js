// Small DOM and formatting helpers shared by every module.

/** Create an element: h("div", {class: "x", dataset: {a: 1}, onclick: fn}, child, "text"). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "style" && typeof value === "object") {
      for (const [prop, v] of Object.entries(value)) el.style.setProperty(prop, v);
    } else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "text") el.textContent = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export const $ = (selector, root = document) => root.querySelector(selector);

/** Milliseconds as m:ss.t (or h:mm:ss for long races). */
export function formatTime(ms) {
  if (ms === null || ms === undefined) return "";
  const tenths = Math.floor(ms / 100) % 10;
  const seconds = Math.floor(ms / 1000);
  const s = String(seconds % 60).padStart(2, "0");
  const m = Math.floor(seconds / 60);
  if (m >= 60) return `${Math.floor(m / 60)}:${String(m % 60).padStart(2, "0")}:${s}`;
  return `${m}:${s}.${tenths}`;
}

/** "KXPMRT" as "KXP MRT": easier to read aloud. */
export const spacedCode = (code) => `${code.slice(0, 3)} ${code.slice(3)}`;

export const OUTCOME_LABELS = {
  playing: "playing",
  won: "won",
  stuck: "stuck",
  resigned: "resigned",
  timeout: "out of time",
  left: "left",
  interrupted: "interrupted",
};
