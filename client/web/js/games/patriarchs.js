// Patriarchs: the Ace foundations on the left, the King foundations on the right, a 3x3
// tableau between them, stock and waste below. Notation: "5>A", "w>K", "S:A>K", "s", "r"
// (docs/games/patriarchs.md).
import { card, cardName, place, slot, stack } from "../cards.js";
import { h } from "../util.js";
import { describeTwoWayMove, twoWayBySide, twoWayHome, twoWayMove, twoWayPile, twoWaySide } from "./common.js";

const cardSource = (src) => (src === "w" ? "w" : /^t[1-9]$/.test(src) ? src.slice(1) : null);

export const patriarchs = {
  total: 104,
  render(view, ui) {
    const tableau = view.tableau.map((code, i) =>
      code
        ? h("div", place(`t${i + 1}`, `Tableau ${i + 1}: ${cardName(code)}`, { class: "pile single", dataset: { slot: String(i + 1) } }), card(code, { dataset: { src: `t${i + 1}` } }))
        : slot("", place(`t${i + 1}`, `Tableau ${i + 1}: empty`, { dataset: { slot: String(i + 1) } })),
    );
    // an empty stock turns the waste over (the one redeal) when tapped
    const stockTap = view.stock_count > 0 ? "s" : "r";
    const stock = h(
      "div",
      { class: "stock-area" },
      stack(
        view.stock_count,
        place("stock", `Stock: ${view.stock_count ? `${view.stock_count} cards, Enter or S turns one up` : view.redeal_allowed ? "empty, Enter or R turns the waste over" : "empty"}`, {
          dataset: { tap: stockTap },
          class: "stock",
        }),
        view.redeal_allowed ? "↻" : "empty",
      ),
      h("span", { class: "caption", "aria-hidden": "true" }, `stock ${view.stock_count}`),
    );
    const waste = h(
      "div",
      { class: "stock-area" },
      view.waste_top
        ? h(
            "div",
            place("waste", `Waste: ${cardName(view.waste_top)}, ${view.waste_count} cards`, { class: "pile single waste" }),
            card(view.waste_top, { dataset: { src: "w" } }),
            h("span", { class: "badge", "aria-hidden": "true" }, String(view.waste_count)),
          )
        : slot("waste", place("waste", "Waste: empty")),
      h("span", { class: "caption", "aria-hidden": "true" }, `waste ${view.waste_count}`),
    );
    const redeal = ui.moveButton({ label: "Redeal", detail: view.redeal_used ? "used" : "1 left", move: "r", dim: !view.redeal_allowed });
    return h(
      "div",
      { class: "layout-patriarchs" },
      h(
        "div",
        { class: "pat-table" },
        h("div", { class: "f-col" }, twoWayBySide(view.foundations, "A").map(twoWayPile)),
        h("div", { class: "pat-tableau" }, tableau),
        h("div", { class: "f-col" }, twoWayBySide(view.foundations, "K").map(twoWayPile)),
      ),
      h("div", { class: "pat-bottom" }, stock, waste, h("div", { class: "controls" }, redeal)),
    );
  },
  moveFor(src, dst) {
    if (!/^[AK]:[SHDC]$/.test(dst)) return null;
    return twoWayMove(src, dst, cardSource);
  },
  homeFor(src, view) {
    const from = cardSource(src);
    if (!from) return null;
    const code = from === "w" ? view.waste_top : view.tableau[Number(from) - 1];
    return code ? `${from}>${twoWaySide(code, view.foundations)}` : null;
  },
  progress: (view) => twoWayHome(view.foundations),
  keys: (view) => ({ s: view.stock_count > 0 ? "s" : "r", r: "r" }), // S turns the stock, R redeals
  describe(move, before, after) {
    if (move === "s") return `Turned up ${cardName(after.waste_top)}: ${after.stock_count} cards left in the stock.`;
    if (move === "r") return "Redealt: the waste is the stock again.";
    const cardAt = (src) => (src === "w" ? before.waste_top : before.tableau[Number(src) - 1]);
    return describeTwoWayMove(move, before, cardAt, (src) => (src === "w" ? "the waste" : `tableau ${src}`));
  },
};
