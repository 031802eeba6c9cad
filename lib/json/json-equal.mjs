/**
 * Deep equality of JSON values, for ajv's `enum`, `const` and `uniqueItems`.
 *
 * Ajv compares with fast-deep-equal, which calls `a.valueOf()` and `a.toString()` whenever an object
 * has its own such members: the JSON `{"valueOf": 1}` — in a caller's enum, or in an object a model
 * writes — then throws a TypeError out of validation (ajv-validator/ajv#2624, open). Values here
 * come from JSON.parse or structured clone, so they are null, booleans, numbers, strings, arrays
 * and plain objects, compared by their own keys only.
 */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") {
    return a !== a && b !== b; // NaN, as fast-deep-equal treats it (JSON has none)
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !jsonEqual(a[key], b[key])) return false;
  }
  return true;
}
