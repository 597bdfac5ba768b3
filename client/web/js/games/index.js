// The renderer for each game id. A renderer draws a view (render), maps a gesture to the
// game's notation (moveFor, homeFor) and counts cards home for display (progress, total).
import { clock } from "./clock.js";
import { parallels } from "./parallels.js";
import { patriarchs } from "./patriarchs.js";
import { persian } from "./persian.js";
import { cruel, perseverance } from "./perseverance.js";
import { unknownGame } from "./unknown.js";

export const RENDERERS = {
  perseverance,
  "perseverance-a": perseverance,
  cruel,
  clock,
  parallels,
  patriarchs,
  "persian-patience": persian,
};

/** The renderer of ``game``: its own, or for a game with no drawing here (added to the server
 * since), the one that shows any view's fields. Every page that draws a board asks here. */
export const rendererFor = (game) => RENDERERS[game] ?? unknownGame;
