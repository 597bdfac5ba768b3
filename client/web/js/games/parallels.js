// Parallels: up to ten rows of ten slots overlapping like columns, the eight two-way
// foundations and the stock. Notation: "c2>A", "c2>K", "S:A>K", "s" (docs/games/parallels.md).
import { card, slot, stack } from "../cards.js";
import { h } from "../util.js";
import { SUITS, twoWayHome, twoWayMove, twoWayPile, twoWaySide } from "./common.js";

const COLUMNS = "abcdefghij";
const slotAt = (view, id) => {
  const m = /^([a-j])(\d+)$/.exec(id);
  return m ? view.rows[Number(m[2]) - 1]?.[COLUMNS.indexOf(m[1])] ?? null : null;
};

export const parallels = {
  total: 104,
  render(view) {
    const free = new Set(view.free);
    const cells = [];
    view.rows.forEach((row, r) =>
      row.forEach((code, c) => {
        const id = `${COLUMNS[c]}${r + 1}`;
        const style = { "--r": r, "--c": c };
        cells.push(
          code
            ? card(code, { class: free.has(id) ? "free" : "blocked", dataset: { src: id, slot: id }, style })
            : slot("", { class: "gap", style }),
        );
      }),
    );
    const hasGap = view.rows.some((row) => row.includes(null));
    const stock = h(
      "div",
      { class: "stock-area" },
      stack(view.stock_count, { dataset: { tap: "s" }, class: "stock" }, "empty"),
      h("span", { class: "caption" }, view.stock_count ? (hasGap ? "fill the gaps" : "deal a row") : "stock empty"),
    );
    // each suit's Ace foundation (built up) beside its King foundation (built down)
    const foundations = h(
      "div",
      { class: "two-way" },
      SUITS.map((suit) =>
        h("div", { class: "pair" }, ["A", "K"].map((side) => twoWayPile(view.foundations.find((f) => f.suit === suit && f.side === side)))),
      ),
    );
    return h(
      "div",
      { class: "layout-parallels" },
      h("div", { class: "top-row" }, foundations, stock),
      h("div", { class: "par-grid", style: { "--rows": view.rows.length } }, cells),
    );
  },
  moveFor(src, dst) {
    if (!/^[AK]:[SHDC]$/.test(dst)) return null;
    return twoWayMove(src, dst, (s) => (/^[a-j]\d+$/.test(s) ? s : null));
  },
  homeFor(src, view) {
    const code = slotAt(view, src);
    return code ? `${src}>${twoWaySide(code, view.foundations)}` : null;
  },
  progress: (view) => twoWayHome(view.foundations),
};
