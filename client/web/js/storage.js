// What this browser remembers between visits, in localStorage under one key style:
// "solitaireRace.<name>". Every page (the client and the leaderboard page) goes through here.
//
//   token     the player's secret from the server's welcome: who this browser is
//   name      the name last used, offered again on the sign-in form
//   playerId  the player's id, so the leaderboard page can mark your row
//   race      the code of the race we are in, to resume it after a reload
//   lastGame  the game last chosen in the lobby
//
// Storage that is unavailable (disabled, or full) behaves as empty: the page still works,
// it just forgets.

const PREFIX = "solitaireRace.";

// Keys of older versions of the client → their name now. Moved once, on first load.
const OLD_KEYS = { playerId: "playerId" };

function read(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key, value) {
  try {
    if (value === null || value === undefined) localStorage.removeItem(key);
    else localStorage.setItem(key, String(value));
  } catch {
    // unavailable or full: nothing remembered
  }
}

export const storage = {
  /** The remembered value (a string), or null. */
  get: (name) => read(PREFIX + name),
  /** Remember a value (kept as a string); null or undefined forgets it. */
  set: (name, value) => write(PREFIX + name, value),
  remove: (name) => write(PREFIX + name, null),
};

/** Move the keys of older versions to the current style (a value already there wins). */
export function migrate() {
  for (const [old, name] of Object.entries(OLD_KEYS)) {
    const value = read(old);
    if (value === null) continue;
    if (storage.get(name) === null) storage.set(name, value);
    write(old, null);
  }
}

migrate();
