// Parallels: up to ten rows of ten slots overlapping like columns, the eight two-way
// foundations and the stock. Notation: "c2>A", "c2>K", "S:A>K", "s" (docs/games/parallels.md).
import { card, cardName, place, slot, stack } from "../cards.js";
import { h } from "../util.js";
import { describeTwoWayMove, SUITS, twoWayHome, twoWayMove, twoWayPile, twoWaySide } from "./common.js";

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
            ? card(
                code,
                place(id, `Row ${r + 1}, column ${COLUMNS[c].toUpperCase()}: ${cardName(code)}, ${free.has(id) ? "free" : "blocked"}`, {
                  class: free.has(id) ? "free" : "blocked",
                  dataset: { src: id, slot: id },
                  style,
                }),
              )
            : slot("", { class: "gap", style }),
        );
      }),
    );
    const hasGap = view.rows.some((row) => row.includes(null));
    const stockWords = view.stock_count ? `${view.stock_count} cards, Enter or S ${hasGap ? "fills the gaps" : "deals a row"}` : "empty";
    const stock = h(
      "div",
      { class: "stock-area" },
      stack(view.stock_count, place("stock", `Stock: ${stockWords}`, { dataset: { tap: "s" }, class: "stock" }), "empty"),
      h("span", { class: "caption", "aria-hidden": "true" }, view.stock_count ? (hasGap ? "fill the gaps" : "deal a row") : "stock empty"),
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
  keys: () => ({ s: "s" }), // S deals from the stock
  describe(move, before, after) {
    if (move === "s") return `Dealt from the stock: ${after.stock_count} cards left.`;
    return describeTwoWayMove(move, before, (src) => slotAt(before, src), (src) => `row ${src.slice(1)}, column ${src[0].toUpperCase()}`);
  },
};
