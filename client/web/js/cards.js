// Drawing cards and piles with HTML/CSS. Every face-up card carries data-card="<code>" so the
// page (and its tests) can tell exactly which card is where; backs and empty slots carry none.
// For screen readers a card is one image named "7 of diamonds": its printed rank and suit
// glyphs (three times over) are hidden, so each card is read once. The places a player moves
// between (piles, foundations, stock...) are named by the renderers with place() below.
import { h } from "./util.js";

export const SUIT_SYMBOLS = { S: "♠", H: "♥", D: "♦", C: "♣" };
export const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const RED = new Set(["H", "D"]);
const FACE = new Set(["J", "Q", "K"]);

export const rankLabel = (rank) => (rank === "T" ? "10" : rank);
export const isRed = (code) => RED.has(code[1]);
/** "T♥" → "10♥", for sentences. */
export const cardText = (code) => rankLabel(code[0]) + SUIT_SYMBOLS[code[1]];
const RANK_NAMES = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
/** "TH" → "10 of hearts", as a screen reader says it. */
export const cardName = (code) => `${RANK_NAMES[code[0]] ?? code[0]} of ${SUIT_NAMES[code[1]]}`;
/** Cards listed top first, "7 of diamonds on 6 of clubs" (codes bottom to top, as views give them). */
export const cardsOnTop = (codes) => [...codes].reverse().map(cardName).join(" on ");

/**
 * The attributes making an element a place of the board the keyboard moves between
 * (keyboard.js): a button named by `label` (its cards included, so they are read once), not
 * in the Tab order by itself (the board keeps one Tab stop). `key` names the place across
 * redraws, so the focus stays where it was after a move. A place with data-away (a foundation)
 * sends the focus back where a card put on it came from: the player goes on from there.
 */
export function place(key, label, attrs = {}) {
  return { ...attrs, role: "button", tabindex: "-1", "aria-label": label, dataset: { ...(attrs.dataset || {}), place: key } };
}

/**
 * A board shown, not played (a replay): its places become pictures named with their cards,
 * read once each, instead of buttons out of reach of the Tab key.
 */
export function showOnly(root) {
  for (const el of root.querySelectorAll("[data-place]")) {
    el.setAttribute("role", "img");
    el.removeAttribute("tabindex");
  }
}

// What a renderer draws a board's buttons (redeal, stock) with when nobody plays it.
const INERT = { moveButton: ({ label, detail }) => h("button", { type: "button", class: "move-button", disabled: true }, h("span", {}, label), detail ? h("small", {}, detail) : null) };

/** Draw `view` into `content` with the game's `renderer`, to be looked at (a replay, a spectator's). */
export function drawStill(content, renderer, view) {
  content.replaceChildren(renderer.render(view, INERT));
  showOnly(content);
}

/** A face-up card. */
export function card(code, attrs = {}) {
  const rank = rankLabel(code[0]);
  const suit = SUIT_SYMBOLS[code[1]];
  const index = () => h("span", { class: "idx", "aria-hidden": "true" }, h("b", {}, rank), h("i", {}, suit));
  const centre = FACE.has(code[0])
    ? h("span", { class: "face", "aria-hidden": "true" }, h("b", {}, rank), h("i", {}, suit))
    : h("span", { class: "pip", "aria-hidden": "true" }, suit);
  return h(
    "div",
    {
      role: "img",
      "aria-label": cardName(code),
      ...attrs,
      class: `card ${isRed(code) ? "red" : "black"} suit-${code[1]}${code[0] === "T" ? " ten" : ""} ${attrs.class || ""}`,
      dataset: { card: code, ...(attrs.dataset || {}) },
    },
    index(),
    centre,
    h("span", { class: "idx corner", "aria-hidden": "true" }, h("b", {}, rank), h("i", {}, suit)),
  );
}

/** A face-down card. */
export function back(attrs = {}) {
  return h("div", { role: "img", "aria-label": "face-down card", ...attrs, class: `card back ${attrs.class || ""}` });
}

/** An empty place for a card, with an optional faint label (a suit, "A", "K"...). */
export function slot(label = "", attrs = {}) {
  const word = label.length > 1 ? " word" : "";
  return h("div", { ...attrs, class: `slot ${attrs.class || ""}` }, label ? h("span", { class: `slot-label${word}`, "aria-hidden": "true" }, label) : null);
}

/**
 * A pile fanned downwards (or rightwards with direction "right"): every card shows its index.
 * `cards` are elements; the pile sets --n so CSS can size it.
 */
export function fan(cards, { emptyLabel = "", ...attrs } = {}, direction = "down") {
  cards.forEach((el, i) => el.style.setProperty("--i", i));
  return h(
    "div",
    { ...attrs, class: `pile fan fan-${direction} ${attrs.class || ""}`, style: { "--n": Math.max(cards.length, 1) } },
    cards.length ? cards : slot(emptyLabel),
  );
}

/** A squared-up stack of backs with a count badge (stock, face-down piles). */
export function stack(count, attrs = {}, label = "") {
  const shown = Math.min(count, 3); // a few offset backs suggest depth; the badge gives the number
  const backs = Array.from({ length: shown }, (_, i) => back({ style: { "--i": i } }));
  return h(
    "div",
    { role: "img", "aria-label": `${count} face-down cards`, ...attrs, class: `pile stack ${attrs.class || ""}` },
    backs.length ? backs : slot(label),
    count > 0 ? h("span", { class: "badge", "aria-hidden": "true" }, String(count)) : null,
  );
}
