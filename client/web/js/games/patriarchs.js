// Patriarchs: the Ace foundations on the left, the King foundations on the right, a 3x3
// tableau between them, stock and waste below. Notation: "5>A", "w>K", "S:A>K", "s", "r"
// (docs/games/patriarchs.md).
import { card, slot, stack } from "../cards.js";
import { h } from "../util.js";
import { twoWayBySide, twoWayHome, twoWayMove, twoWayPile, twoWaySide } from "./common.js";

const cardSource = (src) => (src === "w" ? "w" : /^t[1-9]$/.test(src) ? src.slice(1) : null);

export const patriarchs = {
  total: 104,
  render(view, ui) {
    const tableau = view.tableau.map((code, i) =>
      code
        ? h("div", { class: "pile single", dataset: { slot: String(i + 1) } }, card(code, { dataset: { src: `t${i + 1}` } }))
        : slot("", { dataset: { slot: String(i + 1) } }),
    );
    // an empty stock turns the waste over (the one redeal) when tapped
    const stockTap = view.stock_count > 0 ? "s" : "r";
    const stock = h(
      "div",
      { class: "stock-area" },
      stack(view.stock_count, { dataset: { tap: stockTap }, class: "stock" }, view.redeal_allowed ? "↻" : "empty"),
      h("span", { class: "caption" }, `stock ${view.stock_count}`),
    );
    const waste = h(
      "div",
      { class: "stock-area" },
      view.waste_top
        ? h("div", { class: "pile single waste" }, card(view.waste_top, { dataset: { src: "w" } }), h("span", { class: "badge" }, String(view.waste_count)))
        : slot("waste"),
      h("span", { class: "caption" }, `waste ${view.waste_count}`),
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
};
