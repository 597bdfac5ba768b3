// A game this page has no drawing for (a game the server added since this page was loaded, or
// one not drawn yet): its view's fields as they are, every card code drawn as a card, so the
// race screen, the replay and the spectator's boards still show the position. Nothing on it
// can be picked up: the notation is the game's own, unknown here.
import { card } from "../cards.js";
import { h } from "../util.js";

const CARD = /^[A2-9TJQK][SHDC]$/;

const nested = (v) => v !== null && typeof v === "object";

/** One field's value: a card, a row of values (cards side by side), a list of rows or of named
 * values (piles, one a line), named values, or the value as text. */
function value(v) {
  if (typeof v === "string" && CARD.test(v)) return card(v);
  if (Array.isArray(v) && v.some(nested)) return h("ol", { class: "unknown-list" }, v.map((item) => h("li", {}, value(item))));
  if (Array.isArray(v)) return h("div", { class: "unknown-row" }, v.length ? v.map(value) : "empty");
  if (nested(v)) return fields(v);
  return h("span", { class: "unknown-value" }, v === null ? "—" : String(v));
}

const fields = (object) => h("dl", { class: "unknown-fields" }, Object.entries(object).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, value(v))]));

export const unknownGame = {
  total: 0, // cards home are the server's to say (progress): 0 is "not known"
  render(view) {
    const { game, ...rest } = view;
    return h(
      "div",
      { class: "layout-unknown" },
      h("p", { class: "race-status unknown-game" }, `This page has no drawing of ${game} yet: here is the position as the server gives it. Reload the page to get the newest version.`),
      fields(rest),
    );
  },
  moveFor: () => null,
  homeFor: () => null,
  zonesOf: () => null,
  progress: () => 0,
};
