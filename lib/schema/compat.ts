import "server-only";
import { jsonEqual } from "../json/json-equal.mjs";
import { escapePointerSegment } from "../json/pointer";

/**
 * What changing a workflow's output schema means for its callers. A change is **breaking** when
 * it can fail or surprise code written against the old schema: it drops a field callers may read,
 * or it narrows the values that were valid (a newly required property, a narrowed type or enum,
 * tighter bounds, a new pattern or format). A change that only adds optional fields or widens what
 * is valid is not. A keyword this classifier does not understand is reported as breaking (it cannot
 * tell), never silently passed. Pure.
 */
export interface SchemaChange {
  /** JSON Pointer into the schema (the newer one where the place exists there). */
  path: string;
  change: string;
  breaking: boolean;
}

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => v !== null && typeof v === "object" && !Array.isArray(v);
/** JSON equality by value (key order aside), as the validator compares enum and const values. */
const same = (a: unknown, b: unknown) => (a === undefined || b === undefined ? a === b : jsonEqual(a, b));
const show = (v: unknown) => JSON.stringify(v);

/** Keywords that describe and never constrain. */
const ANNOTATIONS = new Set(["title", "description", "examples", "default", "$comment", "deprecated", "readOnly", "writeOnly", "$schema", "$id", "id", "$anchor"]);
/** Lower bounds: raising one narrows. */
const LOWER = ["minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"];
/** Upper bounds: lowering one narrows. */
const UPPER = ["maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"];
/** Keywords whose appearance or change narrows and whose removal widens. */
const RESTRICTIONS = ["pattern", "format", "multipleOf", "const", "contentMediaType", "contentEncoding"];
/** Maps of subschemas compared by name. */
const NAMED = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/** Single subschemas compared in place. */
const SINGLE = ["items", "additionalItems", "contains", "propertyNames", "unevaluatedItems", "not", "if", "then", "else"];
/** Lists of alternatives: losing a branch narrows, gaining one widens. */
const ALTERNATIVES = ["anyOf", "oneOf"];
const HANDLED = new Set([...ANNOTATIONS, ...LOWER, ...UPPER, ...RESTRICTIONS, ...NAMED, ...SINGLE, ...ALTERNATIVES, "type", "enum", "required", "additionalProperties", "unevaluatedProperties", "uniqueItems", "prefixItems", "allOf", "$ref", "dependentRequired"]);

export function compareSchemas(before: unknown, after: unknown, path = ""): SchemaChange[] {
  const changes: SchemaChange[] = [];
  const add = (at: string, change: string, breaking: boolean) => changes.push({ path: at || "/", change, breaking });
  if (same(before, after)) return changes;
  // At the top: a workflow's default schema. Object runs that send none fail without it.
  if (path === "" && (before === undefined || after === undefined)) {
    add(path, before === undefined ? "default schema added" : "default schema removed: object runs must now send a schema", before !== undefined);
    return changes;
  }
  if (before === undefined) {
    add(path, "schema added", !isObject(after) || Object.keys(after).some((k) => !ANNOTATIONS.has(k)));
    return changes;
  }
  if (after === undefined) {
    add(path, "schema removed", false);
    return changes;
  }
  if (before === true || (isObject(before) && Object.keys(before).length === 0)) {
    if (after === false || (isObject(after) && Object.keys(after).some((k) => !ANNOTATIONS.has(k)))) add(path, "now constrained (anything was allowed)", true);
    return changes;
  }
  if (after === true || (isObject(after) && Object.keys(after).length === 0)) {
    add(path, "no longer constrained", false);
    return changes;
  }
  if (!isObject(before) || !isObject(after)) {
    add(path, `changed from ${show(before)} to ${show(after)}`, true);
    return changes;
  }

  // type: losing a type narrows, gaining one widens.
  const types = (s: Schema) => (s.type === undefined ? null : new Set(Array.isArray(s.type) ? (s.type as string[]) : [s.type as string]));
  const [tb, ta] = [types(before), types(after)];
  if (!same(before.type, after.type)) {
    if (ta === null) add(`${path}/type`, `type no longer restricted (was ${show(before.type)})`, false);
    else if (tb === null) add(`${path}/type`, `type restricted to ${show(after.type)}`, true);
    else {
      const lost = [...tb].filter((t) => !ta.has(t) && !(t === "integer" && ta.has("number")));
      const gained = [...ta].filter((t) => !tb.has(t) && !(t === "integer" && tb.has("number")));
      if (lost.length > 0) add(`${path}/type`, `type narrowed: ${lost.join(", ")} no longer allowed`, true);
      if (gained.length > 0) add(`${path}/type`, `type widened: ${gained.join(", ")} now allowed`, false);
    }
  }

  // enum: a value dropped narrows, a value added widens.
  if (!same(before.enum, after.enum)) {
    const [eb, ea] = [before.enum, after.enum].map((e) => (Array.isArray(e) ? (e as unknown[]) : null));
    if (!ea) add(`${path}/enum`, "enum removed: any value allowed", false);
    else if (!eb) add(`${path}/enum`, `values restricted to ${ea.map(show).join(", ")}`, true);
    else {
      const lost = eb.filter((v) => !ea.some((w) => same(v, w)));
      const gained = ea.filter((v) => !eb.some((w) => same(v, w)));
      if (lost.length > 0) add(`${path}/enum`, `enum narrowed: ${lost.map(show).join(", ")} removed`, true);
      if (gained.length > 0) add(`${path}/enum`, `enum widened: ${gained.map(show).join(", ")} added`, false);
    }
  }

  const [older, newer] = [before, after];
  const bound = (k: string, direction: 1 | -1) => {
    const [b, a] = [older[k], newer[k]];
    if (same(b, a)) return;
    const at = `${path}/${k}`;
    if (typeof a !== "number") return add(at, `${k} removed (was ${show(b)})`, false);
    if (typeof b !== "number") return add(at, `${k} ${show(a)} added`, true);
    const tighter = (a - b) * direction > 0;
    add(at, `${k} ${tighter ? "tightened" : "loosened"} from ${b} to ${a}`, tighter);
  };
  for (const k of LOWER) bound(k, 1);
  for (const k of UPPER) bound(k, -1);
  for (const k of RESTRICTIONS) {
    if (same(before[k], after[k])) continue;
    const at = `${path}/${k}`;
    if (after[k] === undefined) add(at, `${k} removed`, false);
    else if (before[k] === undefined) add(at, `${k} ${show(after[k])} added`, true);
    else add(at, `${k} changed from ${show(before[k])} to ${show(after[k])}`, true);
  }
  if (!same(before.uniqueItems, after.uniqueItems)) add(`${path}/uniqueItems`, after.uniqueItems === true ? "items must now be unique" : "items no longer need be unique", after.uniqueItems === true);

  // Properties: one dropped breaks readers; one added is breaking only when required.
  const required = (s: Schema) => new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const [rb, ra] = [required(before), required(after)];
  const pb = isObject(before.properties) ? before.properties : {};
  const pa = isObject(after.properties) ? after.properties : {};
  for (const name of Object.keys(pb)) {
    if (!Object.hasOwn(pa, name)) add(`${path}/properties/${escapePointerSegment(name)}`, `property "${name}" removed`, true);
  }
  for (const name of Object.keys(pa)) {
    const at = `${path}/properties/${escapePointerSegment(name)}`;
    if (!Object.hasOwn(pb, name)) add(at, `${ra.has(name) ? "required" : "optional"} property "${name}" added`, ra.has(name));
    else changes.push(...compareSchemas(pb[name], pa[name], at));
  }
  // Newly required: a property added as required was reported above; any other is a narrowing.
  for (const name of ra) if (!rb.has(name) && !(Object.hasOwn(pa, name) && !Object.hasOwn(pb, name))) add(`${path}/required`, `property "${name}" now required`, true);
  for (const name of rb) if (!ra.has(name) && Object.hasOwn(pa, name)) add(`${path}/required`, `property "${name}" no longer required`, false);

  for (const k of ["additionalProperties", "unevaluatedProperties"]) {
    const [b, a] = [before[k], after[k]];
    if (same(b, a)) continue;
    const at = `${path}/${k}`;
    if (a === false) add(at, "other properties no longer allowed", true);
    else if (a === undefined || a === true) add(at, "other properties now allowed", false);
    else if (b === false) add(at, "other properties now allowed (under a schema)", false);
    else changes.push(...compareSchemas(b === undefined ? true : b, a, at));
  }

  for (const k of NAMED) {
    if (k === "properties" || same(before[k], after[k])) continue;
    const [mb, ma] = [isObject(before[k]) ? before[k] : {}, isObject(after[k]) ? after[k] : {}];
    for (const name of new Set([...Object.keys(mb), ...Object.keys(ma)])) {
      const at = `${path}/${k}/${escapePointerSegment(name)}`;
      if (k === "$defs" || k === "definitions") {
        // Definitions matter only where referenced; a changed one is compared in place.
        if (Object.hasOwn(mb, name) && Object.hasOwn(ma, name)) changes.push(...compareSchemas(mb[name], ma[name], at));
        continue;
      }
      changes.push(...compareSchemas(Object.hasOwn(mb, name) ? mb[name] : undefined, Object.hasOwn(ma, name) ? ma[name] : undefined, at));
    }
  }
  for (const k of SINGLE) {
    if (same(before[k], after[k])) continue;
    if (k === "not" || k === "if" || k === "then" || k === "else") add(`${path}/${k}`, `${k} changed`, true);
    else changes.push(...compareSchemas(before[k] ?? true, after[k] ?? true, `${path}/${k}`));
  }
  if (!same(before.prefixItems, after.prefixItems)) {
    const [lb, la] = [Array.isArray(before.prefixItems) ? before.prefixItems : [], Array.isArray(after.prefixItems) ? after.prefixItems : []];
    for (let i = 0; i < Math.max(lb.length, la.length); i++) changes.push(...compareSchemas(lb[i] ?? true, la[i] ?? true, `${path}/prefixItems/${i}`));
  }
  for (const k of ALTERNATIVES) {
    if (same(before[k], after[k])) continue;
    const [lb, la] = [Array.isArray(before[k]) ? (before[k] as unknown[]) : [], Array.isArray(after[k]) ? (after[k] as unknown[]) : []];
    const lost = lb.filter((b) => !la.some((a) => same(a, b)));
    const gained = la.filter((a) => !lb.some((b) => same(a, b)));
    if (lb.length === 0) add(`${path}/${k}`, `${k} added`, true);
    else if (la.length === 0) add(`${path}/${k}`, `${k} removed`, false);
    else if (lost.length === 1 && gained.length === 1) changes.push(...compareSchemas(lost[0], gained[0], `${path}/${k}/${la.indexOf(gained[0])}`));
    else {
      if (lost.length > 0) add(`${path}/${k}`, `${lost.length} alternative(s) removed`, true);
      if (gained.length > 0) add(`${path}/${k}`, `${gained.length} alternative(s) added`, false);
    }
  }
  if (!same(before.allOf, after.allOf)) add(`${path}/allOf`, "allOf changed", true);
  if (!same(before.$ref, after.$ref)) add(`${path}/$ref`, `reference changed from ${show(before.$ref)} to ${show(after.$ref)}`, true);
  if (!same(before.dependentRequired, after.dependentRequired)) add(`${path}/dependentRequired`, "dependentRequired changed", true);
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (HANDLED.has(k) || same(before[k], after[k])) continue;
    add(`${path}/${escapePointerSegment(k)}`, `${k} changed (not classified: treated as breaking)`, true);
  }
  return changes;
}
