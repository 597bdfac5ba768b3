// Playing a board with the keyboard alone. A renderer marks each place a player goes to (a
// pile, a foundation, the stock, a Clock hour, the card in hand) with place() (cards.js): a
// button named with its cards, data-place="<key>". This module makes the places one Tab stop
// (a roving tabindex), moves the focus between them with the arrow keys, and turns Enter or
// Space into the picks and drops a click makes (gestures.js): the same notation goes to the
// server, which judges a keyboard move exactly as a click. The game's special moves (redeal,
// stock, Clock's play) have a key each (the renderer's `keys`).

export const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
// keys that are not ours when the focus is on a control of the page (or with a modifier held)
const CONTROLS = "button, a, input, select, textarea, summary, [contenteditable]";

/** Where a place is for the arrow keys: its centre, or the centre of its top card's height
 * for a fanned pile (so piles of any length line up in a row). */
export function anchor(el) {
  const r = el.getBoundingClientRect();
  return { x: r.left + r.width / 2, y: r.top + Math.min(r.height / 2, r.width * 0.7) };
}

/**
 * The place the arrow [dx, dy] leads to from `from`: the nearest one in that direction (the
 * distance along it plus the distance across), preferring those within 45° of it (so Down on
 * a dial goes to the centre, not the next hour, and Right in Parallels' rows skips a gap to
 * the next column's card rather than two columns on).
 */
export function neighbour(from, places, [dx, dy]) {
  const a = anchor(from);
  let best = null;
  for (const el of places) {
    if (el === from) continue;
    const b = anchor(el);
    const along = (b.x - a.x) * dx + (b.y - a.y) * dy;
    if (along <= 1) continue;
    const across = Math.abs(dx ? b.y - a.y : b.x - a.x);
    const score = [across > along ? 1 : 0, along + across];
    if (!best || score[0] < best.score[0] || (score[0] === best.score[0] && score[1] < best.score[1])) best = { el, score };
  }
  return best?.el ?? null;
}

/** The navigation keys (NAV_KEYS): where `key` leads from place `from` among `all`, or null. */
export const NAV_KEYS = [...Object.keys(ARROWS), "Home", "End"];
export function destination(from, all, key, ring) {
  if (key === "Home") return all[0] ?? null;
  if (key === "End") return all[all.length - 1] ?? null;
  if (ring && (key === "ArrowLeft" || key === "ArrowRight")) {
    // round a dial: Left and Right go to the previous and next place in order, wrapping
    const i = all.indexOf(from);
    return all[(i + (key === "ArrowRight" ? 1 : all.length - 1)) % all.length];
  }
  return neighbour(from, all, ARROWS[key]);
}

/**
 * @param {HTMLElement} content the board's content (its children are replaced at each redraw)
 * @param {object} opts
 *   gestures: attachGestures' answer (select, selected, drop, send, clearSelection);
 *   renderer() → the game's renderer (keys, enterMove, homeFor); view() → the view shown;
 *   announce(text): said by the live region; active() → true while the board is playable.
 */
export function attachKeyboard(content, opts) {
  const { gestures, announce } = opts;
  let current = null; // the focused place's key, kept across redraws
  let lastAnchor = null; // where it was, to land nearby when it is gone

  const places = () => [...content.querySelectorAll("[data-place]")];
  const placeOf = (el) => el?.closest?.("[data-place]") ?? null;
  const nameOf = (el) => el.getAttribute("aria-label") ?? "";

  content.setAttribute("role", "application");
  content.setAttribute("aria-roledescription", "card table");
  content.setAttribute("aria-label", "Board: arrow keys move between piles, Enter picks up and puts down, Escape cancels, question mark button lists the keys");

  /** Make `el` the board's one Tab stop (and focus it when asked). */
  function rove(el, focus) {
    for (const other of content.querySelectorAll('[data-place][tabindex="0"]')) other.tabIndex = -1;
    if (!el) return;
    el.tabIndex = 0;
    current = el.dataset.place;
    lastAnchor = anchor(el);
    if (focus) el.focus();
  }

  /** The card a keyboard pick takes: the bottom of the top run where runs move (data-grab), else the top card. */
  function pickable(place) {
    if (place.dataset.src) return place;
    const srcs = place.querySelectorAll("[data-src]");
    return place.querySelector("[data-grab]") ?? srcs[srcs.length - 1] ?? null;
  }

  function markPicked() {
    const picked = gestures.selected();
    for (const el of places()) {
      const src = pickable(el)?.dataset.src;
      if (picked && src === picked) el.setAttribute("aria-pressed", "true");
      else el.removeAttribute("aria-pressed");
    }
    content.classList.toggle("kb-holding", !!picked);
  }

  function cancel() {
    if (!gestures.selected()) return;
    gestures.clearSelection();
    markPicked();
    announce("Put back.");
  }

  /** Enter or Space on a place: put down what is held, else play its one move, else pick up. */
  function activate(place) {
    const held = gestures.selected();
    const src = pickable(place);
    if (held) {
      if (src?.dataset.src === held) {
        cancel();
        return;
      }
      const dst = place.dataset.kbDst ?? place.dataset.dst;
      const from = placeOf(content.querySelector(`[data-src="${held}"]`));
      if (dst) {
        gestures.drop(dst);
        // put on a foundation, the card leaves play: back to where it came from, whose new top
        // card is what the player (and a screen reader, reading the place) wants next
        if ("away" in place.dataset && from) rove(from, true);
      } else if (src) pick(src, place);
      else announce(`Nothing can be put on ${nameOf(place)}.`);
      markPicked();
      return;
    }
    const tap = place.dataset.kbTap ?? place.dataset.tap ?? src?.dataset.tap; // Clock's card in hand: its one move
    if (tap) gestures.send(tap);
    else if (src) pick(src, place);
    else if (opts.renderer()?.enterMove) gestures.send(opts.renderer().enterMove);
    else announce("Nothing to pick up here.");
  }

  function pick(src, place) {
    gestures.select(src);
    markPicked();
    const card = src.dataset.card ? src.getAttribute("aria-label") : nameOf(place);
    announce(`Picked up ${card}. Arrow to a place and press Enter to put it down, Escape to cancel.`);
  }

  /** F: the focused (or held) card to its foundation, as a double click does. */
  function home(place) {
    const src = gestures.selected() ?? pickable(place)?.dataset.src;
    const move = src ? opts.renderer()?.homeFor(src, opts.view()) : null;
    gestures.clearSelection();
    markPicked();
    if (move) gestures.send(move);
    else announce("Nothing here goes to a foundation.");
  }

  function move(from, key) {
    const to = destination(from, places(), key, !!content.querySelector("[data-nav=ring]"));
    if (to) rove(to, true);
  }

  content.addEventListener("keydown", (event) => {
    const place = placeOf(event.target);
    if (!place || event.altKey || event.ctrlKey || event.metaKey) return;
    if (NAV_KEYS.includes(event.key)) move(place, event.key);
    else if (event.key === "Enter" || event.key === " ") activate(place);
    else if (event.key === "Escape") cancel();
    else if (event.key.toLowerCase() === "f") home(place);
    else return;
    event.preventDefault(); // no page scroll on Space or the arrows
    event.stopPropagation();
  });

  // The game's special moves work wherever the focus is on the race screen, except on a control.
  document.addEventListener("keydown", (event) => {
    if (!opts.active() || event.altKey || event.ctrlKey || event.metaKey || event.repeat) return;
    if (event.target.closest?.(CONTROLS)) return;
    const keys = opts.renderer()?.keys?.(opts.view()) ?? {};
    const move = keys[event.key.toLowerCase()];
    if (!move) return;
    event.preventDefault();
    gestures.send(move);
  });

  // A card picked up or put down by click or drag is held (aria-pressed) for the keyboard too:
  // this listener is added after the gestures' own on the board, so it runs after theirs.
  content.parentElement.addEventListener("pointerup", () => markPicked());

  // A click on a place makes it the Tab stop, so Tab comes back where the player was.
  content.addEventListener("focusin", (event) => {
    const place = placeOf(event.target);
    if (place) rove(place, false);
  });

  return {
    /** Whether the focus is on the board (asked before a redraw replaces its elements). */
    hasFocus: () => content.contains(document.activeElement),
    /** After a redraw: the same place (or the nearest) is the Tab stop again, focused if it was. */
    refresh(focus) {
      const all = places();
      // a place's name lists its cards: the cards' own names are hidden, so each is read once
      for (const img of content.querySelectorAll("[data-place] [role=img]")) img.setAttribute("aria-hidden", "true");
      let el = all.find((p) => p.dataset.place === current) ?? null;
      if (!el && lastAnchor && all.length) {
        const d = (p) => Math.hypot(anchor(p).x - lastAnchor.x, anchor(p).y - lastAnchor.y);
        el = all.reduce((a, b) => (d(b) < d(a) ? b : a));
      }
      rove(el ?? all[0] ?? null, focus);
      markPicked();
    },
    /** A new game: its Tab stop starts at its first place. */
    reset() {
      current = null;
      lastAnchor = null;
      gestures.clearSelection();
    },
    /** Focus the board's Tab stop (at a race's start when nothing else has the focus). */
    focus() {
      content.querySelector('[data-place][tabindex="0"]')?.focus();
    },
    markPicked,
  };
}
