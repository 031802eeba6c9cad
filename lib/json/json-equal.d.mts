/** Types of json-equal.mjs (plain JavaScript, loaded as it is by the schema worker; the grammar compiler uses it too). */
export function jsonEqual(a: unknown, b: unknown): boolean;
