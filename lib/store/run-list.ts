import "server-only";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { SqlRunner } from "./runner";
import type { RunListBounds, RunListItem, RunListPage } from "./pages";
import { toRun, type RunRow } from "./rows";
import type { RunFilter } from "./store-types";

/**
 * Listing and searching runs, written once for both backends. A run's input (up to 1 MiB), schema
 * (up to 1 MiB), output and callback can be large, and a page of 100 read whole was 105 MB (issue
 * 31), so a list reads only their first characters in SQL (`substr`) and their sizes. A search
 * scans in steps of at most STEP_BYTES of inputs, yielding to the event loop between them, and
 * reads at most `bounds.searchBytes` per call: a rare term no longer reads every run at once.
 */

/** How the backend finds text in text: SQLite's `instr`, PostgreSQL's `strpos` (both 1-based, 0 when absent). */
export type Contains = (haystack: string, needle: string) => string;

/** The most runs, and bytes of their inputs, one step of a search reads before yielding. */
const STEP_RUNS = 100;
const STEP_BYTES = 4 * 1024 * 1024;
/** A run id the way the API makes them: a search for one is a lookup, not a scan. */
const RUN_ID = /^run_[0-9A-Z]{26}$/;

type PreviewRow = Omit<RunRow, "input" | "schema_json" | "output_json" | "callback"> & {
  input: string;
  input_bytes: number | string | null;
  schema_json: string | null;
  schema_bytes: number | string | null;
  output_json: string | null;
  output_bytes: number | string | null;
  callback: string | null;
  callback_bytes: number | string | null;
  draft: string | null;
  draft_bytes: number | string | null;
};

/** The columns of a list: everything but the large ones, which come as their start (`$n` characters) and their size. */
const columns = (n: number) =>
  `id, operation, workflow_slug, key_id, status, context_slugs, context_chunks, workflow_version, context_versions, prompt_hash,
   schema_hash, attachments, error_json, model_name, model_tag, input_tokens, output_tokens, cost, duration_ms, attempts,
   created_at, updated_at, finished_at, decoding, warnings_json, prompt_tokens, output_token_limit, traceparent, evaluation_id,
   workflow_label, ${["input", "schema_json", "output_json", "callback", "draft"].map((c) => `substr(${c}, 1, $${n}) AS ${c}, octet_length(${c}) AS ${c.replace("_json", "")}_bytes`).join(", ")}`;

/** The filter's conditions, their values appended to `params`. */
function conditions(filter: Omit<RunFilter, "search" | "limit">, params: unknown[]): string[] {
  const where: string[] = [];
  const add = (clause: string, value: unknown) => (params.push(value), where.push(clause.replace("?", `$${params.length}`)));
  if (filter.keyId !== undefined) add("key_id = ?", filter.keyId);
  // A run's project is its key's (keys never change project).
  if (filter.projectId !== undefined) add("key_id IN (SELECT id FROM api_keys WHERE project_id = ?)", filter.projectId);
  if (filter.workflowSlug !== undefined) add("workflow_slug = ?", filter.workflowSlug);
  if (filter.status !== undefined) add("status = ?", filter.status);
  if (filter.operation !== undefined) add("operation = ?", filter.operation);
  if (filter.evaluationId !== undefined) add("evaluation_id = ?", filter.evaluationId);
  if (filter.beforeId !== undefined) add("id < ?", filter.beforeId);
  if (filter.fromId !== undefined) add("id >= ?", filter.fromId);
  return where;
}

const whereClause = (where: string[]) => (where.length ? `WHERE ${where.join(" AND ")}` : "");

/** A string output's text from the start of its JSON literal (which may end inside an escape). */
function stringPreview(json: string): string {
  for (let cut = 0; cut <= 6 && cut < json.length; cut++) {
    try {
      const value: unknown = JSON.parse(`${json.slice(0, json.length - cut)}"`);
      if (typeof value === "string") return value;
    } catch {
      // Ended inside an escape sequence: drop a character of it and try again.
    }
  }
  return json;
}

function toItem(row: PreviewRow): RunListItem {
  const whole = (text: string | null, bytes: number | string | null) => text !== null && Buffer.byteLength(text, "utf8") === Number(bytes);
  const { pace: _pace, input: _input, schema: _schema, output: _output, callback: _callback, grounding: _grounding, history: _history, ...rest } = toRun({ ...row, schema_json: null, output_json: null, callback: null, pace: null, draft: null });
  const truncated: RunListItem["truncated"] = [];
  const cut = <T>(field: RunListItem["truncated"][number], text: string | null, bytes: number | string | null): T | null => {
    if (text === null) return null;
    if (whole(text, bytes)) return JSON.parse(text) as T;
    truncated.push(field);
    return null;
  };
  if (!whole(row.input, row.input_bytes)) truncated.push("input");
  const schema = cut("schema", row.schema_json, row.schema_bytes);
  const output = cut("output", row.output_json, row.output_bytes);
  const callback = cut<RunListItem["callback"]>("callback", row.callback, row.callback_bytes);
  // A draft carries its instructions whole (up to 200,000 characters) and their diff: previewed like the rest.
  const draft = cut<RunListItem["draft"]>("draft", row.draft, row.draft_bytes);
  // The model's last output (up to 32 KiB) stays on the run itself.
  const error = rest.error && (({ lastOutput: _last, ...problem }) => problem)(rest.error);
  return {
    ...rest,
    error,
    input: row.input,
    inputBytes: Number(row.input_bytes ?? 0),
    schema,
    output,
    outputPreview: typeof output === "string" ? output : row.output_json?.startsWith('"') ? stringPreview(row.output_json) : row.output_json,
    outputBytes: Number(row.output_bytes ?? 0),
    callback,
    draft,
    truncated,
  };
}

/** Runs newest first by `filter`, as previews; `contains` is the backend's substring test. */
export async function listRuns(sql: SqlRunner, contains: Contains, filter: RunFilter, bounds: RunListBounds): Promise<RunListPage> {
  const search = filter.search;
  if (search === undefined || RUN_ID.test(search)) {
    const params: unknown[] = [];
    const where = conditions(filter, params);
    if (search !== undefined) (params.push(search), where.push(`id = $${params.length}`));
    params.push(bounds.previewChars);
    const preview = params.length;
    params.push(filter.limit);
    const rows = await sql.all<PreviewRow>(`SELECT ${columns(preview)} FROM runs ${whereClause(where)} ORDER BY id DESC LIMIT $${params.length}`, params);
    return { runs: rows.map(toItem), scannedTo: null };
  }
  const found: RunListItem[] = [];
  let below = filter.beforeId;
  let read = 0;
  for (;;) {
    const stepParams: unknown[] = [];
    const step = await sql.all<{ id: string; bytes: number | string | null }>(
      `SELECT id, octet_length(input) AS bytes FROM runs ${whereClause(conditions({ ...filter, beforeId: below }, stepParams))} ORDER BY id DESC LIMIT ${STEP_RUNS}`,
      stepParams,
    );
    // Runs in this step: within STEP_BYTES and what the call may still read, and at least one per call.
    let taken = 0;
    let bytes = 0;
    for (const run of step) {
      const size = Number(run.bytes ?? 0);
      if ((taken > 0 && bytes + size > STEP_BYTES) || (read + bytes > 0 && read + bytes + size > bounds.searchBytes)) break;
      bytes += size;
      taken++;
    }
    if (taken === 0) return { runs: found, scannedTo: step.length === 0 ? null : (below ?? null) };
    const newest = step[0]!.id;
    const oldest = step[taken - 1]!.id;
    const params: unknown[] = [];
    const where = conditions({ ...filter, beforeId: undefined }, params);
    params.push(newest, oldest, search, bounds.searchChars, bounds.previewChars);
    const n = params.length;
    where.push(`id <= $${n - 4}`, `id >= $${n - 3}`, `(id = $${n - 2} OR ${contains(`lower(substr(input, 1, $${n - 1}))`, `lower($${n - 2})`)} > 0)`);
    const rows = await sql.all<PreviewRow>(`SELECT ${columns(n)} FROM runs ${whereClause(where)} ORDER BY id DESC`, params);
    found.push(...rows.map(toItem));
    read += bytes;
    below = oldest;
    if (found.length >= filter.limit) return { runs: found.slice(0, filter.limit), scannedTo: null };
    if (taken === step.length && step.length < STEP_RUNS) return { runs: found, scannedTo: null };
    await yieldToEventLoop();
  }
}
