import "server-only";
import { resolveLocalRef } from "../json/pointer";
import type { GrammarBuilder } from "./grammar-builder";
import { isObject, type Schema } from "./keywords";
import { mergeAllOf } from "./merge";

/** `$ref`s and joined subschemas: resolving local references, a reference's own rule, and allOf merging. */

/** The schema a local `$ref` points at, or null (noted) when it is not local, an anchor or unresolved. */
export function resolve(v: GrammarBuilder, ref: string, path: string): Schema | boolean | null {
  if (!ref.startsWith("#")) {
    v.note("$ref (not local)", path);
    return null;
  }
  // "#name" names a schema by its anchor (`$anchor`, or an `id`/`$id` of "#name"), not by pointer:
  // left to validation rather than resolved here (found by the grammar fuzzer: resolved as a
  // pointer, it pointed at the root).
  if (ref !== "#" && !ref.startsWith("#/")) {
    v.note("$ref (anchor)", path);
    return null;
  }
  const node = resolveLocalRef(v.root, ref)?.value;
  if (isObject(node) || typeof node === "boolean") return node;
  v.note("$ref (unresolved)", path);
  return null;
}

/** A plain `$ref` as a rule of its own, named after it and shared by every use (recursion included). */
export function refRule(v: GrammarBuilder, ref: string, path: string): string | null {
  const known = v.refs.get(ref);
  if (known) return known;
  const target = resolve(v, ref, path);
  if (target === null) return v.primitive("value");
  // Reserve the name first so recursive references resolve to it.
  const name = v.freshName(ref.split("/").pop() || "ref");
  v.refs.set(ref, name);
  v.define(name, "");
  const body = v.visit(target, ref.slice(1), `${name}-body`);
  if (body === null) {
    v.undefine(name);
    v.refs.delete(ref);
    return null;
  }
  v.define(name, body);
  return name;
}

/** Follows a pure `$ref` so allOf/anyOf branches can be merged with their siblings. */
export function inline(v: GrammarBuilder, schema: unknown, path: string, depth = 0): Schema | boolean {
  if (isObject(schema) && typeof schema.$ref === "string" && depth < 16) {
    const { $ref, ...rest } = schema;
    const target = resolve(v, $ref, path);
    if (target === null) return rest;
    // Recursive schemas: merging stops at depth 16 and the reference stays a rule reference.
    return Object.keys(rest).length ? merge(v, [rest, inline(v, target, path, depth + 1)], path) : inline(v, target, path, depth + 1);
  }
  return isObject(schema) || typeof schema === "boolean" ? schema : {};
}

/** allOf semantics for the keywords the grammar uses (merge.ts); what it cannot merge is noted. */
export function merge(v: GrammarBuilder, parts: (Schema | boolean)[], path: string): Schema | boolean {
  return mergeAllOf(parts, (keyword) => v.note(keyword, path));
}
