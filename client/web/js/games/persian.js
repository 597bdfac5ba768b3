// Persian Patience: eight piles fanned down, eight foundations (two per suit), two redeals.
// Notation: "3>f", "3>5", "r" (docs/games/persian-patience.md).
import { card, fan, place, slot, SUIT_SYMBOLS } from "../cards.js";
import { h } from "../util.js";
import { describePileMove, foundationsLabel, pileHomeFor, pileLabel, pileMoveFor, pileMoveZones, SUITS } from "./common.js";

const ORDER = "A789TJQK"; // this game's ranks, low to high

export const persian = {
  total: 64,
  render(view, ui) {
    const foundations = h(
      "div",
      place("f", foundationsLabel(view.foundations, (i) => SUITS[Math.floor(i / 2)]), { class: "foundations eight", dataset: { dst: "f", away: "" } }),
      view.foundations.map((top, i) =>
        top
          ? h("div", { class: "pile single", dataset: { dst: "f" } }, card(top))
          : slot(SUIT_SYMBOLS[SUITS[Math.floor(i / 2)]], { dataset: { dst: "f" } }),
      ),
    );
    const piles = view.piles.map((cards, i) => {
      const id = `p${i + 1}`;
      const els = cards.map((code, j) => card(code, { dataset: j === cards.length - 1 ? { src: id } : {} }));
      return fan(els, place(id, pileLabel(i + 1, cards), { dataset: { dst: id, pick: id, pile: String(i + 1) } }));
    });
    const redeal = ui.moveButton({ label: "Redeal", detail: `${view.redeals_left} left`, move: "r", dim: !view.redeal_allowed });
    return h(
      "div",
      { class: "layout-persian" },
      h(
        "div",
        { class: "top-row" },
        // the order is this game's own: the Ace sits just below the 7
        h("div", { class: "f-block" }, foundations, h("span", { class: "caption f-order" }, "foundations build A 7 8 9 10 J Q K")),
        h("div", { class: "controls" }, redeal),
      ),
      h("div", { class: "tableau eight" }, piles),
    );
  },
  moveFor: pileMoveFor,
  homeFor: pileHomeFor,
  zonesOf: pileMoveZones,
  describe: describePileMove,
  keys: () => ({ r: "r" }), // R redeals
  progress(view) {
    return view.foundations.reduce((sum, top) => sum + (top ? ORDER.indexOf(top[0]) + 1 : 0), 0);
  },
};
