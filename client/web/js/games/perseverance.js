// Perseverance, Perseverance A and Cruel: 12 piles fanned down so every card shows, the four
// foundations, and the redeal button. Notation: "3>f", "3>7", "r" (docs/games/perseverance.md).
import { card, fan, place } from "../cards.js";
import { h } from "../util.js";
import { describePileMove, pileHomeFor, pileLabel, pileMoveFor, pileMoveZones, rankValue, suitFoundations } from "./common.js";

/** Where the same-suit descending run at the top of a pile starts: what a keyboard pick takes. */
function runStart(cards) {
  let i = cards.length - 1;
  while (i > 0 && cards[i - 1][1] === cards[i][1] && rankValue(cards[i - 1]) === rankValue(cards[i]) + 1) i -= 1;
  return i;
}

function make({ runs }) {
  return {
    total: 52,
    render(view, ui) {
      const piles = view.piles.map((cards, i) => {
        const id = `p${i + 1}`;
        // In Perseverance a run moves as a unit, so any card can be grabbed and the ones on top
        // come along; in Cruel only the top card moves, and a click anywhere picks it.
        const grab = runs ? runStart(cards) : cards.length - 1;
        const els = cards.map((code, j) =>
          card(code, { dataset: { ...(runs || j === cards.length - 1 ? { src: id } : {}), ...(j === grab ? { grab: "" } : {}) } }),
        );
        return fan(
          els,
          place(id, pileLabel(i + 1, cards), {
            dataset: { dst: id, pile: String(i + 1), ...(runs ? { carry: "" } : { pick: id }) },
          }),
        );
      });
      const redeal = ui.moveButton({
        label: "Redeal",
        detail: view.redeals_left === null ? "unlimited" : `${view.redeals_left} left`,
        move: "r",
        dim: !view.redeal_allowed,
      });
      return h(
        "div",
        { class: "layout-perseverance" },
        h("div", { class: "top-row" }, suitFoundations(view.foundations, "f"), h("div", { class: "controls" }, redeal)),
        h("div", { class: "tableau twelve" }, piles),
      );
    },
    moveFor: pileMoveFor,
    homeFor: pileHomeFor,
    zonesOf: pileMoveZones,
    describe: describePileMove,
    keys: () => ({ r: "r" }), // R redeals
    progress(view) {
      return view.foundations.reduce((sum, top) => sum + (top ? rankValue(top) : 0), 0);
    },
  };
}

export const perseverance = make({ runs: true });
export const cruel = make({ runs: false });
