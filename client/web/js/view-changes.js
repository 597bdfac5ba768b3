// Compact view updates (docs/protocol.md, `move_result.changes`): the browser's copy of
// server/solitaire_race/engine/view_changes.py. Each change is [key, value] (the view's `key` is
// now `value`) or [key, index, value] (item `index` of the list at `key` is now `value`),
// applied in order. Returns a new view; the old one is left as it was.
export function applyChanges(view, changes) {
  const out = { ...view };
  const copied = new Set(); // lists already copied from `view`: ours to change in place
  for (const change of changes) {
    if (change.length === 2) {
      out[change[0]] = change[1];
      copied.delete(change[0]); // the change's own value: copied before any item changes
    } else if (change.length === 3) {
      const [key, index, value] = change;
      if (!Array.isArray(out[key]) || !Number.isInteger(index) || index < 0 || index >= out[key].length) {
        throw new Error(`no item ${index} in the view's ${key}`);
      }
      if (!copied.has(key)) {
        out[key] = [...out[key]];
        copied.add(key);
      }
      out[key][index] = value;
    } else {
      throw new Error(`a change has 2 or 3 parts, not ${change.length}`);
    }
  }
  return out;
}
