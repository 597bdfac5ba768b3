// How each game is played in this browser client: the controls, one short paragraph per game,
// shown by the race screen's "?" and on the rules pages (/rules/<game>). The rules themselves
// are the server's (GET /api/rules/<game>, server/solitaire_race/game_rules.py): this file
// says only which gesture makes which move.

const CHECKED = "The server checks every move: a refused one shows why.";

const PILES =
  "Drag a card where it goes, or click it and then click the place. Double-click a top card to send it home. " +
  "The Redeal button redeals.";

export const CONTROLS = {
  perseverance: `${PILES} Grab any card of a run: the cards on top of it come along. ${CHECKED}`,
  "perseverance-a": `${PILES} Grab any card of a run: the cards on top of it come along. ${CHECKED}`,
  cruel: `${PILES} Only the top card of a pile moves. ${CHECKED}`,
  clock:
    "Click the centre to turn up the first card; then click the card in hand (or the Place button) to put it " +
    "under its hour and turn up the next one, or drag it onto its hour. When the exchange is offered, click " +
    `the face-down card to take instead. ${CHECKED}`,
  parallels:
    "Drag a free card (the white ones; greyed cards are blocked) onto a foundation, or click it and then the foundation; " +
    "double-click sends it to the foundation it follows. Drag a foundation's top card onto the other " +
    `foundation of its suit to shift it. Click the stock to fill the gaps or deal a row. ${CHECKED}`,
  patriarchs:
    "Drag a tableau card or the waste card onto a foundation, or click it and then the foundation; " +
    "double-click sends it to the foundation it follows. Drag a foundation's top card onto the other " +
    "foundation of its suit to shift it. Click the stock to turn a card; once it is empty, click it (or the " +
    `Redeal button) to turn the waste over. ${CHECKED}`,
  "persian-patience": `${PILES} The foundations build A, 7, 8, 9, 10, J, Q, K. ${CHECKED}`,
};

// The same moves by keyboard (keyboard.js; docs/web-client.md, "Keyboard and screen readers").
const NAV =
  "Keyboard: Tab reaches the board; the arrow keys move between places (Home and End: the first and the last); " +
  "Enter or Space picks up the focused card and, on another place, puts it down; Escape puts it back; F sends it home.";

export const KEYS = {
  perseverance: `${NAV} R redeals.`,
  "perseverance-a": `${NAV} R redeals.`,
  cruel: `${NAV} R redeals.`,
  clock:
    "Keyboard: Enter or P turns up the first card, then places the card in hand and turns up the next; Left and " +
    "Right go round the dial. When the exchange is offered, Enter on an hour takes its top face-down card instead.",
  parallels: `${NAV} S fills the gaps or deals a row.`,
  patriarchs: `${NAV} S turns a card from the stock; R (or S on the empty stock) turns the waste over.`,
  "persian-patience": `${NAV} R redeals.`,
};

/** The keys of a game, or the general ones for a game this page does not know. */
export const keysFor = (game) => KEYS[game] ?? NAV;

/** The controls of a game, or a general sentence for a game this page does not know. */
export const controlsFor = (game) =>
  CONTROLS[game] ?? `Drag a card where it goes, or click it and then click the place. ${CHECKED}`;

/** What par means, in a sentence (the rules page's "Par" says it in full). */
export const PAR_TITLE =
  "par: the moves of the shortest winning line the server's solver found for this deal; races rank by time, not moves";

/** The address of a game's rules page; `#par` to land on what par means. */
export const rulesUrl = (game, anchor = "") => `/rules/${encodeURIComponent(game)}${anchor ? `#${anchor}` : ""}`;
