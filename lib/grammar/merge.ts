import "server-only";
import { isObject, type Schema } from "./keywords";
import { ANNOTATIONS } from "./vocabulary";
import { setOwn } from "../json/own";

/** Branches an allOf of two anyOfs may expand into. */
const MAX_PRODUCT = 64;

/**
 * allOf semantics for the keywords the grammar uses: the parts merged into one schema (false when
 * they contradict). What it cannot merge is reported through `note`, for validation to decide.
 */
export function mergeAllOf(parts: (Schema | boolean)[], note: (keyword: string) => void): Schema | boolean {
  if (parts.some((p) => p === false)) return false;
  const out: Schema = {};
  for (const part of parts) {
    if (part === true) continue;
    for (const [key, value] of Object.entries(part as Schema)) {
      if (!Object.hasOwn(out, key)) {
        setOwn(out, key, value);
        continue;
      }
      const current = out[key];
      if (JSON.stringify(current) === JSON.stringify(value)) continue;
      switch (key) {
        case "properties": {
          const merged: Schema = { ...(current as Schema) };
          for (const [name, sub] of Object.entries(value as Schema)) setOwn(merged, name, Object.hasOwn(merged, name) ? { allOf: [merged[name], sub] } : sub);
          out.properties = merged;
          break;
        }
        case "required":
          out.required = [...new Set([...(current as string[]), ...(value as string[])])];
          break;
        case "type": {
          const a = ([] as string[]).concat(current as string[]);
          const b = ([] as string[]).concat(value as string[]);
          const both = a.flatMap((t) => b.filter((u) => u === t || (t === "number" && u === "integer")).concat(b.includes("number") && t === "integer" ? ["integer"] : []));
          out.type = [...new Set(both)];
          if (!both.length) return false;
          break;
        }
        case "minimum":
        case "minLength":
        case "minItems":
        case "minProperties":
          out[key] = Math.max(current as number, value as number);
          break;
        case "maximum":
        case "maxLength":
        case "maxItems":
        case "maxProperties":
          out[key] = Math.min(current as number, value as number);
          break;
        case "enum":
          out.enum = (current as unknown[]).filter((v) => (value as unknown[]).some((w) => JSON.stringify(w) === JSON.stringify(v)));
          break;
        case "additionalProperties":
          out.additionalProperties = current === false || value === false ? false : { allOf: [current, value] };
          break;
        case "items":
          out.items = isObject(current) && isObject(value) ? { allOf: [current, value] } : current;
          if (!(isObject(current) && isObject(value))) note("items in allOf");
          break;
        case "allOf":
          out.allOf = [...(current as unknown[]), ...(value as unknown[])];
          break;
        case "anyOf":
        case "oneOf": {
          // (a1 | a2) and (b1 | b2) = (a1 and b1) | (a1 and b2) | …, while that stays small.
          const left = current as unknown[];
          const right = value as unknown[];
          if (left.length * right.length <= MAX_PRODUCT) out[key] = left.flatMap((a) => right.map((b) => ({ allOf: [a, b] })));
          else note(`${key} in allOf`);
          if (key === "oneOf") note("oneOf in allOf");
          break;
        }
        default:
          if (!ANNOTATIONS.has(key)) note(`${key} in allOf`);
      }
    }
  }
  return out;
}
