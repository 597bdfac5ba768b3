// What the game renderers share: rank arithmetic for display, the parsing of target ids, the
// two-way foundations of Parallels and Patriarchs (an Ace foundation built up and a King
// foundation built down per suit), and the words a screen reader says for piles and moves.
import { card, cardName, cardsOnTop, place, slot, SUIT_NAMES, SUIT_SYMBOLS } from "../cards.js";
import { h } from "../util.js";

export const SUITS = ["S", "H", "D", "C"];
const RANKS = "A23456789TJQK";
export const rankValue = (code) => RANKS.indexOf(code[0]) + 1;

/** Pile id "p7" → 7 (the notation's 1-based number), or null. */
const pileNumber = (id) => (/^p\d+$/.test(id) ? Number(id.slice(1)) : null);

/** The pile games' notation ("3>f", "3>7") for a card moved from pile src to dst, or null. */
export function pileMoveFor(src, dst) {
  const from = pileNumber(src);
  if (from === null) return null;
  if (dst === "f") return `${from}>f`;
  const to = pileNumber(dst);
  return to === null || to === from ? null : `${from}>${to}`;
}

/** The pile games' move sending pile src's card home, or null. */
export const pileHomeFor = (src) => pileMoveFor(src, "f");

/**
 * Where a move of the pile games' notation ("3>f", "3>7", "r") starts and ends, as the ids
 * pileMoveFor takes (its inverse), so that a hint can be shown on the board. A move
 * without a place (the redeal) names its button instead; null for anything else.
 */
export function pileMoveZones(move) {
  if (move === "r") return { button: "r" };
  const m = /^(\d+)>(\d+|f)$/.exec(move);
  return m ? { src: `p${m[1]}`, dst: m[2] === "f" ? "f" : `p${m[2]}` } : null;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A fanned pile's name for a screen reader: "Pile 3: 7 of diamonds on 6 of clubs, 2 cards". */
export const pileLabel = (n, codes) => `Pile ${n}: ${codes.length ? `${cardsOnTop(codes)}, ${plural(codes.length, "card")}` : "empty"}`;

/** The foundations' name: each one's top card, or its suit and "empty". */
export function foundationsLabel(tops, suitOf) {
  const each = tops.map((top, i) => (top ? cardName(top) : `${SUIT_NAMES[suitOf(i)]} empty`));
  return `Foundations: ${each.join(", ")}`;
}

/**
 * What a move of the pile games' notation did, said after it is made: `before` and `after`
 * are the views around it.
 */
export function describePileMove(move, before, after) {
  if (move === "r") {
    const left = after.redeals_left === null ? "" : ` ${plural(after.redeals_left, "redeal")} left.`;
    return `Redealt.${left}`;
  }
  const m = /^(\d+)>(\d+|f)$/.exec(move);
  if (!m) return null;
  const from = before.piles[Number(m[1]) - 1];
  const moved = from.length - after.piles[Number(m[1]) - 1].length;
  const bottom = from[from.length - Math.max(moved, 1)];
  const what = `${cardName(bottom)}${moved > 1 ? ` and ${moved - 1} more` : ""}`;
  return m[2] === "f" ? `${what} from pile ${m[1]} to the foundation.` : `${what} from pile ${m[1]} onto pile ${m[2]}.`;
}

/** One foundation per suit, showing its top card (Perseverance family). */
export function suitFoundations(tops, dst) {
  return h(
    "div",
    place("f", foundationsLabel(tops, (i) => SUITS[i]), { class: "foundations", dataset: { dst, away: "" } }),
    tops.map((top, i) =>
      top ? h("div", { class: "pile single", dataset: { dst } }, card(top)) : slot(SUIT_SYMBOLS[SUITS[i]], { dataset: { dst } }),
    ),
  );
}

/** Cards home on a two-way foundation: an Ace side holds A..top, a King side K..top. */
export function twoWayHome(foundations) {
  let home = 0;
  for (const f of foundations) home += f.side === "A" ? rankValue(f.top) : 14 - rankValue(f.top);
  return home;
}

const SIDE_NAMES = { A: "ace foundation, built up", K: "king foundation, built down" };

/** One two-way foundation: its top card, which can be dragged onto the other side (a shift). */
export function twoWayPile(f) {
  const id = `${f.side}:${f.suit}`;
  const name = `${SUIT_NAMES[f.suit][0].toUpperCase()}${SUIT_NAMES[f.suit].slice(1)} ${SIDE_NAMES[f.side]}: ${cardName(f.top)}`;
  return h(
    "div",
    place(id, name, {
      class: `pile single foundation side-${f.side}`,
      dataset: { dst: id, away: "" },
      title: f.side === "A" ? "Ace foundation, built up" : "King foundation, built down",
    }),
    card(f.top, { dataset: { src: `fnd-${id}` } }),
    h("span", { class: "side-tag", "aria-hidden": "true" }, f.side === "A" ? "▲" : "▼"),
  );
}

/**
 * What a move onto or between two-way foundations did ("c2>A", "w>K", "S:A>K"); `cardAt(src)`
 * is the card a source held before the move, `where(src)` the words for it.
 */
export function describeTwoWayMove(move, before, cardAt, where) {
  const shift = /^([SHDC]):([AK])>([AK])$/.exec(move);
  if (shift) {
    const top = before.foundations.find((f) => f.suit === shift[1] && f.side === shift[2]).top;
    return `${cardName(top)} from the ${SIDE_NAMES[shift[2]].split(",")[0]} to the ${SIDE_NAMES[shift[3]].split(",")[0]}.`;
  }
  const m = /^(\w+)>([AK])$/.exec(move);
  if (!m) return null;
  const code = cardAt(m[1]);
  return `${code ? cardName(code) : "A card"} from ${where(m[1])} to the ${SIDE_NAMES[m[2]].split(",")[0]}.`;
}

export function twoWayBySide(foundations, side) {
  return SUITS.map((suit) => foundations.find((f) => f.suit === suit && f.side === side));
}

/**
 * The move for a drop on a two-way foundation `dst` ("A:S"): a card source `card(src)` gives
 * e.g. "c2>A"; a foundation top ("fA:S") dropped on the other side gives the shift "S:A>K".
 */
export function twoWayMove(src, dst, cardSource) {
  const [side] = dst.split(":");
  if (src.startsWith("fnd-")) {
    const [fromSide, suit] = src.slice(4).split(":");
    return fromSide === side ? null : `${suit}:${fromSide}>${side}`;
  }
  const from = cardSource(src);
  return from ? `${from}>${side}` : null;
}

/**
 * Which side a double-clicked card is sent to: the one whose top it follows, else the Ace
 * side. Only a convenience to pick the notation; the server still judges the move.
 */
export function twoWaySide(code, foundations) {
  const up = foundations.find((f) => f.suit === code[1] && f.side === "A");
  const down = foundations.find((f) => f.suit === code[1] && f.side === "K");
  if (up && rankValue(up.top) + 1 === rankValue(code)) return "A";
  if (down && rankValue(down.top) - 1 === rankValue(code)) return "K";
  return "A";
}
