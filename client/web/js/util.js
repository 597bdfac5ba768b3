// Small DOM helpers shared by every module (and the leaderboard page). Formatting is in
// format.js.

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

/** A player's name as a link to their page (player.js); ``newTab`` where leaving the page
 * would interrupt something (a race). */
export function playerLink(id, name, newTab = false) {
  const attrs = { class: "player-link", href: `/player/${id}` };
  return h("a", newTab ? { ...attrs, target: "_blank", rel: "noopener" } : attrs, name);
}
