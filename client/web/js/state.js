// The browser client's state, in one place. Every screen reads it here and changes it here:
// the fields of `state` below (set by main.js as server messages arrive), and the functions
// of this module for the race screen's game, whose parts change together. Nothing else keeps
// a copy. What outlives the page (the token, the race to resume) is in storage.js; the
// server decides everything, so this is only what it last said.
import { OUTCOME } from "./format.js";

/**
 * @typedef {object} Player who I am: the `player` of the server's welcome
 * @property {number} id
 * @property {string} name
 *
 * @typedef {object} Racer what we know about a racer, merged from progress, standings, move
 *   results, room updates and the ranking
 * @property {string} name
 * @property {number} home cards home...
 * @property {number} total ...of this many (0: not known yet)
 * @property {number} moves
 * @property {string} outcome one of format.js's OUTCOME values
 * @property {number|null} time_ms their time once their game is over
 * @property {boolean} connected
 * @property {boolean} [me] this racer is me
 *
 * @typedef {object} Play the race screen's game
 * @property {object|null} start the race_started message (game, deal, code, daily,
 *   time_limit_s, ...): null before it, or for a race that ended while we were away
 * @property {object|null} view my game as the server shows it; only move_result changes it
 * @property {number} moves my moves so far
 * @property {string|null} outcome my game's outcome (OUTCOME.PLAYING while it runs)
 * @property {number|null} endedMs my time once my game is over (the clock stops there)
 * @property {number} clockBase performance.now() at the race's start (the clock runs from it)
 * @property {boolean} practice practising a past day's daily challenge: the only place hints are answered
 * @property {object|null} finished the race_finished message, once the race is over
 * @property {Map<number, Racer>} racers player id → racer, me included
 */

export const state = {
  /** @type {Player|null} null until the server's welcome */
  me: null,
  /** @type {string|null} the name typed on the sign-in form, until the welcome */
  pendingName: null,
  /** @type {Array<{id: string, name: string, summary: string}>} the games message */
  games: [],
  /** @type {object|null} the race we are in: the latest summary from a room message */
  race: null,
  /** a join_race is waiting for its answer (its refusal is said by the one who asked) */
  joining: false,
  /** race_elsewhere answers followed since the last room (a cluster's nodes, bounded) */
  follows: 0,
  /** @type {object|null} today's daily_challenges message: which ranked attempts are used */
  daily: null,
  /** @type {Play} */
  play: emptyPlay(),
};

function emptyPlay() {
  return {
    start: null,
    view: null,
    moves: 0,
    outcome: null,
    endedMs: null,
    clockBase: 0,
    practice: false,
    finished: null,
    racers: new Map(),
  };
}

/** A game's display name from the games message (its id until that has come). */
export const gameName = (id) => state.games.find((g) => g.id === id)?.name ?? id;

/** A game's one-line rules summary ("" if unknown). */
export const gameSummary = (id) => state.games.find((g) => g.id === id)?.summary ?? "";

/** A race_started message (the start, or our game as it is now after a reconnect): a new
 * game on the race screen, with the racers it names. */
export function startPlay(m) {
  state.play = {
    ...emptyPlay(),
    start: m,
    view: m.view,
    moves: m.moves,
    outcome: m.outcome,
    clockBase: performance.now() - m.elapsed_ms,
    practice: !!m.daily?.practice,
  };
}

/** Forget the race screen's game (back to the lobby, or a race only known by its ranking). */
export function clearPlay() {
  state.play = emptyPlay();
}

/** Merge what we learnt about a racer. */
export function updateRacer(playerId, fields) {
  const racers = state.play.racers;
  const racer = racers.get(playerId) || { connected: true, moves: 0, outcome: OUTCOME.PLAYING, time_ms: null };
  racers.set(playerId, { ...racer, ...fields });
}

/** The connection flags of a room message; racers who left the room keep their results. */
export function updateConnections(players) {
  for (const p of players) if (state.play.racers.has(p.id)) updateRacer(p.id, { connected: p.connected });
}

/** My racer entry, if I race. */
export const myRacer = () => (state.me ? state.play.racers.get(state.me.id) : undefined);

/** The milliseconds my race clock shows now: my time once my game is over, else the time
 * since the start. */
export function clockMs() {
  const play = state.play;
  return play.endedMs ?? (play.start ? Math.max(0, performance.now() - play.clockBase) : 0);
}
