import "server-only";
/** A string, number or boolean in a generated object, with its JSON Pointer (RFC 6901). */
export interface Leaf {
  pointer: string;
  value: string | number | boolean;
  /** The pointer of the object or array holding it. */
  parent: string;
  /** The words of its property name (the nearest one above array indexes), lower case: `invoiceDate` → invoice, date. */
  words: string[];
}

const STOP = new Set(["is", "has", "the", "a", "an", "of", "to", "in", "on", "at", "by", "for", "and", "or", "value", "id"]);

export const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** The words of a property name: camelCase, snake_case, kebab-case and spaces split, stop words dropped. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z\d])([A-Z])/g, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .map((w) => w.toLowerCase())
    .filter((w) => w && !STOP.has(w) && !/^\d+$/.test(w));
}

/** Every string, number and boolean leaf of `value` in document order (nulls are not leaves). */
export function collectLeaves(value: unknown, limit = 100_000): Leaf[] {
  const out: Leaf[] = [];
  const walk = (node: unknown, pointer: string, parent: string, name: string) => {
    if (out.length >= limit) return;
    if (typeof node === "string" || typeof node === "boolean" || (typeof node === "number" && Number.isFinite(node))) {
      out.push({ pointer, value: node, parent, words: nameWords(name) });
    } else if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, `${pointer}/${i}`, pointer, name));
    } else if (node !== null && typeof node === "object") {
      for (const [key, item] of Object.entries(node)) walk(item, `${pointer}/${escapePointer(key)}`, pointer, key);
    }
  };
  walk(value, "", "", "");
  return out;
}
