// Clock: thirteen piles round a dial (the Kings in the centre) and the card in hand.
// Notation: "p" places the card in hand (or turns up the first card), "x7.1" exchanges the
// fourth King for hour 7's top face-down card (docs/games/clock.md).
import { back, card, cardName, cardsOnTop, cardText, place } from "../cards.js";
import { h } from "../util.js";

const NUMERALS = ["", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "K"];
const hourOf = (code) => ({ A: 1, T: 10, J: 11, Q: 12, K: 13 })[code[0]] ?? Number(code[0]);
const hourName = (hour) => (hour === 13 ? "the centre" : `hour ${hour}`);

function hourPile(pile, view) {
  const { hour } = pile;
  // face-up cards went under the pile: show them fanned out to the right, the backs on top
  const up = pile.face_up.map((code, i) => card(code, { style: { "--i": i } }));
  const backs = [];
  for (let n = pile.face_down; n >= 1; n -= 1) {
    const exchange = `x${hour}.${n}`; // n counts from the top: the last one drawn is n = 1
    // only while the server says an exchange is possible is a face-down card a target;
    // otherwise a drop on it means its hour
    backs.push(
      back({
        dataset: view.exchange_allowed ? { dst: exchange, tap: exchange } : {},
        style: { "--i": up.length, "--j": pile.face_down - n },
        title: `face-down card ${n} from the top of ${hourName(hour)}`,
      }),
    );
  }
  const tapToStart = hour === 13 && view.hand === null && pile.face_down > 0;
  const name = hour === 13 ? "Centre, the kings" : `Hour ${hour}`;
  const faceUp = pile.face_up.length ? `, face up: ${cardsOnTop(pile.face_up)}` : "";
  const label = `${name}: ${pile.face_down} face-down${faceUp}${view.exchange_allowed && pile.face_down ? ", Enter exchanges the king for its top face-down card" : ""}`;
  // the keyboard exchanges for the top face-down card (the cards are unknown: any is as good)
  const keyTap = view.exchange_allowed && pile.face_down ? { kbTap: `x${hour}.1` } : {};
  return h(
    "div",
    place(`h${hour}`, label, {
      class: `hour ${hour === 13 ? "centre" : ""} ${view.exchange_allowed ? "spread" : ""}`,
      style: { "--h": hour, "--up": up.length, "--down": pile.face_down },
      dataset: { dst: `h${hour}`, hour: String(hour), ...(tapToStart ? { tap: "p" } : {}), ...keyTap },
    }),
    h("span", { class: "numeral", title: hourName(hour), "aria-hidden": "true" }, NUMERALS[hour]),
    h("div", { class: "hour-cards" }, up, backs),
  );
}

export const clock = {
  total: 52,
  render(view, ui) {
    const piles = view.piles.map((pile) => hourPile(pile, view));
    const handLabel = view.hand
      ? `In hand: ${cardName(view.hand)}, ${view.exchange_allowed ? "a fourth king: exchange it for a face-down card, or Enter places it" : `Enter places it under ${hourName(hourOf(view.hand))}`}`
      : "Hand empty: Enter turns up the first card";
    const hand = view.hand
      ? h(
          "div",
          place("hand", handLabel, { class: "hand" }),
          card(view.hand, { dataset: { src: "hand", tap: "p" }, class: "in-hand" }),
          h("span", { class: "caption", "aria-hidden": "true" }, view.exchange_allowed ? "exchange it for a face-down card" : `goes under ${hourName(hourOf(view.hand))}`),
        )
      : h("div", place("hand", handLabel, { class: "hand empty" }), h("span", { class: "caption", "aria-hidden": "true" }, piles.length && view.piles[12].face_down ? "tap the centre to start" : ""));
    const play = ui.moveButton({ label: view.hand ? "Place" : "Turn up", detail: view.hand ? cardText(view.hand) : "first card", move: "p" });
    const exchange = h("span", { class: "note" }, view.exchange_used ? "Exchange used" : view.exchange_allowed ? "Exchange now: pick a face-down card" : "Exchange: unused");
    return h(
      "div",
      { class: "layout-clock", dataset: { nav: "ring" } }, // Left and Right go round the dial
      h("div", { class: "dial" }, h("div", { class: "dial-face" }), piles, hand),
      h("div", { class: "controls clock-controls" }, play, exchange),
    );
  },
  moveFor(src, dst, view) {
    if (src !== "hand" || !view.hand) return null;
    if (/^x\d+\.\d+$/.test(dst)) return dst;
    const hour = /^h(\d+)$/.exec(dst);
    if (!hour) return null;
    // "p" names no destination: a drop on another hour is not a move at all
    if (Number(hour[1]) !== hourOf(view.hand)) return { hint: `${cardText(view.hand)} goes under ${hourName(hourOf(view.hand))}` };
    return "p";
  },
  homeFor: () => "p",
  keys: () => ({ p: "p" }), // P plays, as Enter does in the terminal
  enterMove: "p", // Enter on an hour plays too: the card in hand has only one place to go
  describe(move, before, after) {
    const next = after.hand ? ` In hand: ${cardName(after.hand)}.` : "";
    if (move === "p" && !before.hand) return `Turned up ${cardName(after.hand)}.`;
    if (move === "p") return `${cardName(before.hand)} under ${hourName(hourOf(before.hand))}.${next}`;
    const x = /^x(\d+)\.\d+$/.exec(move);
    return x ? `Exchanged ${cardName(before.hand)} for a face-down card of ${hourName(Number(x[1]))}.${next}` : null;
  },
  progress: (view) => view.piles.reduce((sum, pile) => sum + pile.face_up.length, 0),
};
