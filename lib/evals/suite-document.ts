import "server-only";
import { suiteDocumentSchema, type SuiteDocument } from "../api/suite-shapes";
import type { Config } from "../config/config-types";
import { dedupeFieldErrors, GenserveError, validationError, zodFieldErrors, type FieldError } from "../errors";
import { escapePointerSegment } from "../json/pointer";
import { mayRead } from "../keys/owner-access";
import { readableSuite } from "./evaluation-access";
import type { Principal } from "../keys/api-keys";
import type { SchemaCompiler } from "../schema/validator";
import { assertRoom } from "../store/quotas";
import type { Store, SuiteRecord } from "../store/store-types";
import { compilePattern } from "./expect";

/**
 * A suite document checked whole: its shape (zod), every `matches` pattern on RE2, its JSON Schema
 * as a run would screen it, and its slug against the one it is stored under. Every problem is
 * reported at once, by JSON Pointer, as a 400.
 */
export async function parseSuite(raw: unknown, options: { slug?: string; schemas: Pick<SchemaCompiler, "problems"> }): Promise<SuiteDocument> {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw validationError([{ path: "", message: "the suite must be a JSON object" }]);
  // `schemaFile` is the YAML file's: said so, rather than as an unknown key.
  const { schemaFile, ...rest } = raw as Record<string, unknown>;
  const result = suiteDocumentSchema.safeParse(rest, { reportInput: true });
  const errors: FieldError[] = result.success ? [] : zodFieldErrors(result.error);
  const document = raw as Partial<SuiteDocument>;
  if (schemaFile !== undefined) errors.push({ path: "/schemaFile", message: "is read by `genserve eval` from a file; through the API, send the schema itself as `schema`" });
  if (options.slug !== undefined && typeof document.suite === "string" && document.suite !== options.slug) {
    errors.push({ path: "/suite", message: `is "${document.suite}" but the suite is stored as "${options.slug}"` });
  }
  if (result.success) {
    for (const [i, c] of result.data.cases.entries()) {
      for (const [pointer, e] of Object.entries(c.expect ?? {})) {
        if (e.matches === undefined) continue;
        try {
          compilePattern(e.matches);
        } catch (error) {
          errors.push({ path: `/cases/${i}/expect/${escapePointerSegment(pointer)}/matches`, message: `is not a valid RE2 pattern: ${(error as Error).message}` });
        }
      }
    }
    if (result.data.schema) errors.push(...(await options.schemas.problems(result.data.schema)));
  }
  if (errors.length > 0 || !result.success) throw validationError(dedupeFieldErrors(errors), "The suite is not valid.");
  return result.data;
}

/**
 * Creates or replaces a suite; another key's suite of the same slug is refused (409), not
 * overwritten, and one larger than `limits.suiteBytes` as stored (413) before it is checked, and a new one past
 * `limits.suitesPerKey` (409 quota_exceeded; the API's cap).
 */
export async function putSuite(
  store: Store,
  schemas: Pick<SchemaCompiler, "problems">,
  limits: Pick<Config["limits"], "suiteBytes" | "suitesPerKey">,
  caller: Principal,
  slug: string,
  raw: unknown,
  at: Date,
): Promise<{ suite: SuiteRecord; created: boolean }> {
  const bytes = Buffer.byteLength(JSON.stringify(raw !== null && typeof raw === "object" && !Array.isArray(raw) ? { ...raw, suite: slug } : raw));
  if (bytes > limits.suiteBytes) {
    throw new GenserveError("payload_too_large", {
      detail: `The suite is ${bytes} bytes as stored; the most a suite may be is ${limits.suiteBytes} bytes (limits.suiteBytes).`,
      errors: [{ path: "", message: `is ${bytes} bytes; a suite may be at most ${limits.suiteBytes} bytes (limits.suiteBytes)` }],
    });
  }
  const document = await parseSuite(raw, { slug, schemas });
  const existing = await store.suites.get(slug);
  if (existing && !(await mayRead(store, caller, existing.keyId))) throw new GenserveError("conflict", { detail: `The suite slug "${slug}" is taken by another key; choose another.` });
  // A new suite needs room under the key's cap (suites put at the same moment can pass it by as many as are in flight).
  if (!existing) assertRoom({ resource: "suites", limit: limits.suitesPerKey }, await store.quotas.count(caller.keyId, "suites", at.toISOString()));
  return store.suites.put(slug, existing?.keyId ?? caller.keyId, { ...document, suite: slug }, at.toISOString());
}

export async function deleteSuite(store: Store, caller: Principal, slug: string): Promise<void> {
  await readableSuite(store, caller, slug);
  if (!(await store.suites.delete(slug))) throw new GenserveError("suite_not_found", { detail: `No suite "${slug}" exists for this key.` });
}
