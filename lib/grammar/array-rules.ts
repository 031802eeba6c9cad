import "server-only";
import { MAX_REPEAT, repeat } from "./gbnf";
import type { GrammarBuilder } from "./grammar-builder";
import { type Schema } from "./keywords";
import { finiteValues, literalValue } from "./finite-values";

/** Arrays: tuple items then the rest, item counts, and uniqueItems over a few known item values. */

/** `uniqueItems` is written into the grammar for item sets of at most this many known values. */
const MAX_DISTINCT_VALUES = 12;

export function arrayRule(v: GrammarBuilder, schema: Schema, path: string, hint: string): string | null {
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
  const rest = Array.isArray(schema.prefixItems) ? schema.items : Array.isArray(schema.items) ? schema.additionalItems : schema.items;
  const minItems = typeof schema.minItems === "number" ? schema.minItems : 0;
  const maxItems = typeof schema.maxItems === "number" ? schema.maxItems : undefined;
  if (maxItems !== undefined && minItems > maxItems) return null; // no array fits
  v.primitive("ws");
  if (schema.uniqueItems === true) {
    const unique = prefix.length === 0 ? distinctList(v, rest, minItems, maxItems, path, hint) : undefined;
    if (unique !== undefined) return unique;
    v.note("uniqueItems", path);
  }

  const items: string[] = [];
  let cut = false;
  for (let i = 0; i < prefix.length && (maxItems === undefined || i < maxItems); i++) {
    const expr = v.visit(prefix[i], `${path}/prefixItems/${i}`, `${hint}-${i}`);
    if (expr === null) {
      // No value fits item i: the array stops before it, so no later item (tuple or rest) appears.
      if (i < minItems) return null;
      cut = true;
      break;
    }
    items.push(expr);
  }
  const prefixLength = items.length;
  const restExpr = rest === false || cut ? null : v.visit(rest ?? true, `${path}/items`, `${hint}-item`);
  const restMin = Math.max(0, minItems - prefixLength);
  let restMax = maxItems === undefined ? undefined : Math.max(0, maxItems - prefixLength);
  if (restExpr === null) {
    if (restMin > 0) return null;
    restMax = 0;
  }
  if (restMin > MAX_REPEAT || (restMax !== undefined && restMax > MAX_REPEAT)) {
    v.note("minItems/maxItems", path);
    restMax = undefined;
  }
  const lo = Math.min(restMin, MAX_REPEAT);

  // All tuple items are written (a sound subset: shorter arrays are valid too), then the rest.
  const parts: string[] = [];
  items.forEach((expr, i) => parts.push(i === 0 ? expr : `"," ws ${expr}`));
  let body = parts.join(" ");
  if (restExpr !== null && restMax !== 0) {
    if (prefixLength > 0) {
      const more = repeat(`("," ws ${restExpr})`, lo, restMax);
      body = more ? `${body} ${more}` : body;
    } else {
      const more = repeat(`("," ws ${restExpr})`, Math.max(0, lo - 1), restMax === undefined ? undefined : restMax - 1);
      const list = `${restExpr}${more ? ` ${more}` : ""}`;
      body = lo > 0 ? list : `(${list})?`;
    }
  }
  return v.rule(hint, `"[" ws ${body ? `${body} ` : ""}"]"`);
}

/**
 * `uniqueItems` over a few known item values: the arrays of distinct values in their declared
 * order (a sound subset: any order would do), min..max of them. One rule per (next value, count).
 */
function distinctList(v: GrammarBuilder, items: unknown, min: number, max: number | undefined, path: string, hint: string): string | null | undefined {
  const values = finiteValues(v, items ?? true, `${path}/items`);
  if (values === undefined || values.length > MAX_DISTINCT_VALUES) return undefined;
  const n = values.length;
  const hi = Math.min(max ?? n, n);
  if (min > hi) return null;
  const literals = values.map((value) => literalValue(value));
  // after[i][k]: the rest of the array once k values are written, the next one chosen from index i on.
  const after: (string | null)[][] = Array.from({ length: n + 1 }, () => []);
  for (let i = n; i >= 0; i--) {
    for (let k = hi; k >= 1; k--) {
      const options = k >= min ? ['"]"'] : [];
      if (k < hi) {
        for (let j = i; j < n; j++) {
          const rest = after[j + 1]![k + 1];
          if (rest) options.push(`"," ws ${literals[j]} ${rest}`);
        }
      }
      after[i]![k] = options.length ? v.rule(`${hint}-distinct`, options.join(" | ")) : null;
    }
  }
  const first = min === 0 ? ['"]"'] : [];
  for (let j = 0; j < n && hi >= 1; j++) {
    const rest = after[j + 1]![1];
    if (rest) first.push(`${literals[j]} ${rest}`);
  }
  return first.length ? v.rule(hint, `"[" ws (${first.join(" | ")})`) : null;
}

