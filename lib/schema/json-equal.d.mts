/** Types of json-equal.mjs (plain JavaScript, loaded as it is by the schema worker). */
export function jsonEqual(a: unknown, b: unknown): boolean;
