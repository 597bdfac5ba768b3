// Turning clicks and drags on a board into moves. A board marks what can be picked up with
// data-src="<id>" and what can receive with data-dst="<id>"; the game's renderer maps a pair
// (src, dst) to a move in its notation. Nothing here judges legality: the move is sent and
// the server's answer decides (a refused drag snaps back).

const DRAG_THRESHOLD_PX = 6;
const DOUBLE_CLICK_MS = 400;
const SNAP_MS = 180;

/**
 * @param {HTMLElement} root the board element (holds a .board-content and the drag layer)
 * @param {object} opts
 *   moveFor(src, dst) → notation or null; homeFor(src) → notation or null (double click);
 *   play(moves) → Promise<boolean> (true: applied), the caller renders the new view.
 */
export function attachGestures(root, opts) {
  let press = null; // {el, target, x, y, pointerId}
  let drag = null; // {src, ghost, carried}
  let selection = null; // {src, at}
  let hover = null;

  // A click anywhere on a pile that moves single cards picks its top card (data-pick).
  const srcOf = (el) => {
    const direct = el?.closest?.("[data-src]");
    if (direct) return direct;
    const pile = el?.closest?.("[data-pick]");
    return pile ? pile.querySelector(`[data-src="${pile.dataset.pick}"]`) : null;
  };
  const tapOf = (el) => el?.closest?.("[data-tap]");
  const dstOf = (el) => el?.closest?.("[data-dst]");

  function clearSelection() {
    selection = null;
    for (const el of root.querySelectorAll(".selected")) el.classList.remove("selected");
    root.classList.remove("has-selection");
  }

  function select(el) {
    clearSelection();
    selection = { src: el.dataset.src, at: performance.now() };
    for (const carried of carriedWith(el)) carried.classList.add("selected");
    root.classList.add("has-selection");
  }

  function setHover(el) {
    if (hover === el) return;
    hover?.classList.remove("drop-hover");
    hover = el;
    hover?.classList.add("drop-hover");
  }

  // moveFor may answer {hint} for a gesture the notation cannot express (e.g. Clock's card in
  // hand dropped on another hour): that is shown, nothing is sent.
  function asMove(move) {
    if (move && typeof move === "object") {
      opts.hint?.(move.hint);
      return null;
    }
    return move || null;
  }

  function send(proposed) {
    clearSelection();
    const move = asMove(proposed);
    if (move) opts.play([move]).catch(() => false); // the board shows the server's answer
  }

  function click(target) {
    const srcEl = srcOf(target);
    const dstEl = dstOf(target);
    if (selection) {
      const { src, at } = selection;
      if (srcEl && srcEl.dataset.src === src) {
        // the same source again: quickly, it's a double click (send it home); else unselect
        if (performance.now() - at < DOUBLE_CLICK_MS) send(opts.homeFor(src));
        else clearSelection();
        return;
      }
      if (dstEl) {
        send(opts.moveFor(src, dstEl.dataset.dst));
        return;
      }
      if (srcEl) select(srcEl);
      else if (tapOf(target)) send(tapOf(target).dataset.tap);
      else clearSelection();
      return;
    }
    // Some cards have one move only (Clock's card in hand, a stock): a tap plays it.
    const tapEl = tapOf(target);
    if (tapEl) send(tapEl.dataset.tap);
    else if (srcEl) select(srcEl);
  }

  function carriedWith(el) {
    // In a pile that moves runs, the grabbed card takes the cards above it along.
    if (!el.parentElement?.hasAttribute("data-carry")) return [el];
    const out = [el];
    for (let next = el.nextElementSibling; next; next = next.nextElementSibling) {
      if (next.dataset.src === el.dataset.src) out.push(next);
    }
    return out;
  }

  function startDrag() {
    const carried = carriedWith(press.el);
    const originRect = press.el.getBoundingClientRect();
    const ghost = document.createElement("div");
    ghost.className = "drag-ghost";
    ghost.style.left = `${originRect.left}px`;
    ghost.style.top = `${originRect.top}px`;
    // the copies live outside their layout, so they get their size from the originals
    ghost.style.setProperty("--cw", `${press.el.offsetWidth}px`);
    ghost.style.setProperty("--ch", `${press.el.offsetHeight}px`);
    for (const el of carried) {
      const rect = el.getBoundingClientRect();
      const copy = el.cloneNode(true);
      copy.classList.remove("selected");
      for (const attr of ["data-src", "data-dst", "data-tap", "data-card"]) copy.removeAttribute(attr);
      copy.style.position = "absolute";
      // offsets measured between unrotated boxes' centres, sizes from the layout
      copy.style.left = `${rect.left + rect.width / 2 - el.offsetWidth / 2 - originRect.left}px`;
      copy.style.top = `${rect.top + rect.height / 2 - el.offsetHeight / 2 - originRect.top}px`;
      copy.style.width = `${el.offsetWidth}px`;
      copy.style.height = `${el.offsetHeight}px`;
      copy.style.margin = "0";
      ghost.append(copy);
      el.classList.add("dragging-origin");
    }
    root.append(ghost); // inside the board so the card size variables still apply
    clearSelection();
    drag = { src: press.el.dataset.src, ghost, carried };
    root.classList.add("is-dragging");
  }

  function endDrag() {
    drag.ghost.remove();
    for (const el of drag.carried) el.classList.remove("dragging-origin");
    root.classList.remove("is-dragging");
    setHover(null);
    drag = null;
  }

  function snapBack(current) {
    const ghost = current.ghost;
    ghost.style.transition = `transform ${SNAP_MS}ms ease-out`;
    ghost.style.transform = "translate(0px, 0px)";
    setTimeout(() => {
      ghost.remove();
      for (const el of current.carried) el.classList.remove("dragging-origin");
    }, SNAP_MS);
  }

  root.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || press || drag) return;
    const el = srcOf(event.target);
    press = { el, target: event.target, x: event.clientX, y: event.clientY, pointerId: event.pointerId };
    if (el || tapOf(event.target)) {
      root.setPointerCapture(event.pointerId);
      event.preventDefault(); // no text selection or native image drag
    }
  });

  root.addEventListener("pointermove", (event) => {
    if (!press || event.pointerId !== press.pointerId) return;
    const dx = event.clientX - press.x;
    const dy = event.clientY - press.y;
    if (!drag && press.el && Math.hypot(dx, dy) >= DRAG_THRESHOLD_PX) startDrag();
    if (drag) {
      drag.ghost.style.transform = `translate(${dx}px, ${dy}px)`;
      const under = document.elementFromPoint(event.clientX, event.clientY);
      const dst = dstOf(under);
      setHover(dst && root.contains(dst) ? dst : null);
    }
  });

  root.addEventListener("pointerup", (event) => {
    if (!press || event.pointerId !== press.pointerId) return;
    const { target } = press;
    press = null;
    if (root.hasPointerCapture(event.pointerId)) root.releasePointerCapture(event.pointerId);
    if (!drag) {
      click(target);
      return;
    }
    const under = document.elementFromPoint(event.clientX, event.clientY);
    const dstEl = dstOf(under);
    const current = drag;
    // keep the ghost where it was dropped until the server answers
    root.classList.remove("is-dragging");
    setHover(null);
    drag = null;
    const move = dstEl && root.contains(dstEl) ? asMove(opts.moveFor(current.src, dstEl.dataset.dst)) : null;
    if (!move) {
      snapBack(current);
      return;
    }
    opts
      .play([move])
      .catch(() => false)
      .then((applied) => {
        if (applied) {
          current.ghost.remove();
          for (const el of current.carried) el.classList.remove("dragging-origin");
        } else snapBack(current);
      });
  });

  root.addEventListener("pointercancel", () => {
    press = null;
    if (drag) endDrag();
  });

  // The keyboard (keyboard.js) picks up and puts down through the same selection, so a card
  // picked up by a key and put down by a click (or the other way round) is one move.
  return {
    clearSelection,
    select,
    selected: () => selection?.src ?? null,
    /** Put the selection down on target `dst` (the renderer's moveFor makes the move). */
    drop: (dst) => selection && send(opts.moveFor(selection.src, dst)),
    /** Send a move that needs no target (a tap, a special key's move). */
    send,
  };
}
