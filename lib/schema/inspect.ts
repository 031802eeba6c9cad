import "server-only";
import type { FieldError } from "../errors";
import { toPointer } from "../json/pointer";
import { schemaHash } from "./canonical";
import { screenSchema, type JsOnlyPattern, type LegacyKeyword, type SchemaLimits } from "./guard";

export type Draft = "draft-04" | "draft-06" | "draft-07" | "2019-09" | "2020-12";

/** Which draft a schema is written in: its `$schema`, else 2020-12 unless it uses draft-07-only forms. */
export function detectDraft(schema: Record<string, unknown>): Draft | null {
  const declared = schema.$schema;
  if (typeof declared === "string") {
    if (declared.includes("draft-04")) return "draft-04";
    if (declared.includes("draft-06")) return "draft-06";
    if (declared.includes("draft-07")) return "draft-07";
    if (declared.includes("2019-09")) return "2019-09";
    if (declared.includes("2020-12")) return "2020-12";
    return null;
  }
  // `id` (not `$id`) names a schema only in draft-04; later drafts' validators refuse the keyword.
  if (typeof schema.id === "string" && schema.$id === undefined) return "draft-04";
  return usesDraft7Forms(schema, 0) ? "draft-07" : "2020-12";
}

function usesDraft7Forms(node: unknown, depth: number): boolean {
  if (node === null || typeof node !== "object" || depth > 64) return false;
  if (Array.isArray(node)) return node.some((n) => usesDraft7Forms(n, depth + 1));
  const record = node as Record<string, unknown>;
  if (Array.isArray(record.items) || "additionalItems" in record) return true;
  return Object.values(record).some((v) => usesDraft7Forms(v, depth + 1));
}


/**
 * The older-draft keywords a schema's own draft reads differently, tolerated as mainstream validators
 * do: draft-04's `id` is an unknown keyword (ignored) from draft-06 on, and `definitions` is read as
 * `$defs` under 2019-09 and 2020-12 (references into it resolve by pointer either way).
 */
export function draftWarnings(draft: Draft, declared: boolean, found: readonly LegacyKeyword[]): string[] {
  const where = (list: LegacyKeyword[]) => `at ${list[0]!.path}${list.length > 1 ? ` and ${list.length - 1} more place${list.length > 2 ? "s" : ""}` : ""}`;
  const warnings: string[] = [];
  const ids = found.filter((f) => f.keyword === "id");
  if (draft !== "draft-04" && ids.length > 0) {
    const is = declared ? `is ${draft}` : `has no "$schema" and was read as ${draft}`;
    warnings.push(`The schema ${is} but uses draft-04's "id" (${where(ids)}); it was ignored as an unknown keyword. Use "$id" to name a schema.`);
  }
  const definitions = found.filter((f) => f.keyword === "definitions");
  // Without "$schema" the draft is genserve's reading, and "definitions" the common spelling: no warning.
  if (declared && (draft === "2019-09" || draft === "2020-12") && definitions.length > 0) {
    warnings.push(`The schema is ${draft} but keeps subschemas in "definitions" (${where(definitions)}), the name before 2019-09; they were used as "$defs".`);
  }
  return warnings;
}

/** What can be known of a caller's schema without compiling it. */
export interface Inspection {
  /** Problems that refuse it (empty when it may be compiled); the rest is empty or null then. */
  errors: FieldError[];
  /** Patterns RE2 cannot run: analysed for ReDoS before they may run on JavaScript's engine. */
  jsOnly: JsOnlyPattern[];
  draft: Draft | null;
  /** SHA-256 of its canonical JSON. */
  hash: string;
  /** What was tolerated (an older draft's keyword), for the runs that use it. */
  warnings: string[];
}

export interface InspectOptions {
  /** Where the schema sits in the request body. */
  base: readonly string[];
  /** genserve's rule for the top level of a request's schema. */
  topLevelRule: boolean;
  /** The schema's JSON text, when the caller has it. */
  json?: string;
}

/**
 * Screening, the draft, its warnings and the hash: everything about a schema that needs no compiler.
 * Plain work over the schema's JSON, proportional to its size: the server runs it on the event loop
 * for small schemas and in a schema worker for large ones (a 1 MiB schema takes over 100 ms here).
 */
export function inspectSchema(schema: unknown, limits: SchemaLimits, options: InspectOptions): Inspection {
  const jsOnly: JsOnlyPattern[] = [];
  const legacy: LegacyKeyword[] = [];
  const refused = (errors: FieldError[]): Inspection => ({ errors, jsOnly: [], draft: null, hash: "", warnings: [] });
  const errors = screenSchema(schema, limits, { ...options, jsOnly: (p) => jsOnly.push(p), legacy: (found) => legacy.push(found) });
  if (errors.length > 0) return refused(errors);
  const record = schema as Record<string, unknown>;
  const draft = detectDraft(record);
  if (draft === null) return refused([{ path: toPointer([...options.base, "$schema"]), message: "unknown $schema; use draft-04, -06, -07, 2019-09 or 2020-12" }]);
  return { errors: [], jsOnly, draft, hash: schemaHash(record), warnings: draftWarnings(draft, typeof record.$schema === "string", legacy) };
}
