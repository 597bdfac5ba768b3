// Game feel: cards slide to their new places, and a win gets a moment of celebration. Nothing
// moves for a player who asked for less motion (prefers-reduced-motion: the board simply
// shows the new position, and the win a still message).
//
// The slide is FLIP (first, last, invert, play): the board is redrawn from the server's view
// as always (race.js); just before, every face-up card's place is noted by its code, and each
// card that is somewhere else now starts from its old place and slides home. In the two-deck
// games a code may be on the board twice: those cards are not slid (which one went where is
// not known), they appear in place as before.
import { h } from "./util.js";

export const SLIDE_MS = 160;
export const CELEBRATION_MS = 2400;
const reduced = matchMedia("(prefers-reduced-motion: reduce)");

/** Where each face-up card seen once in ``root`` is now, by its code. */
export function places(root) {
  const seen = new Map();
  for (const el of root.querySelectorAll("[data-card]")) {
    const code = el.dataset.card;
    seen.set(code, seen.has(code) ? null : el.getBoundingClientRect());
  }
  return seen;
}

/** Slide every card of ``root`` that moved from its place in ``before`` (``places``). */
export function slide(root, before) {
  if (reduced.matches) return;
  const now = places(root);
  for (const el of root.querySelectorAll("[data-card]")) {
    const from = before.get(el.dataset.card);
    const to = now.get(el.dataset.card);
    if (!from || !to) continue; // new on the board, or one of two alike
    const dx = from.left - to.left;
    const dy = from.top - to.top;
    if (Math.abs(dx) < 1 && Math.abs(dy) < 1) continue;
    el.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }], {
      duration: SLIDE_MS,
      easing: "cubic-bezier(.2, .7, .3, 1)",
    });
  }
}

/** A moment for a won game: a message over the board, the foundations' cards leaping once. */
export function celebrate(board) {
  board.querySelector(".celebration")?.remove();
  const note = h("div", { class: "celebration", role: "status" }, h("b", {}, "Solved!"), h("span", {}, "every card is home"));
  board.append(note);
  if (!reduced.matches) {
    board.querySelectorAll(".foundation [data-card], .foundations [data-card]").forEach((el, i) =>
      el.animate(
        [{ transform: "none" }, { transform: "translateY(-18%) rotate(-4deg)" }, { transform: "none" }],
        { duration: 600, delay: 60 * i, easing: "ease-in-out" },
      ),
    );
  }
  setTimeout(() => note.remove(), CELEBRATION_MS);
}
