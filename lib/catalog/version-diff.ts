import "server-only";
import { structuredPatch } from "diff";
import { jsonEqual } from "../json/json-equal.mjs";
import { compareSchemas, type SchemaChange } from "../schema/compat";
import type { CatalogWorkflow } from "./workflow-catalog";

/** What changed between two versions of a workflow, for people deciding whether to promote it. */
export interface WorkflowDiff {
  slug: string;
  from: string;
  to: string;
  /** The instructions as a unified line diff (hunks of " ", "-", "+" lines); empty when unchanged. */
  instructions: { hunks: { oldStart: number; oldLines: number; newStart: number; newLines: number; lines: string[] }[] };
  /** Parameters (model, temperature, limits, description, example) whose value changed. */
  parameters: { name: string; from: unknown; to: unknown }[];
  contexts: { added: string[]; removed: string[]; repinned: { slug: string; from: string; to: string }[] };
  /** The default schema's changes, each classified for callers; `breaking` when any is. */
  schema: { changes: SchemaChange[]; breaking: boolean };
}

const PARAMETERS = ["model", "description", "temperature", "maxOutputTokens", "retries", "timeoutMs", "example"] as const;

export function diffWorkflows(from: CatalogWorkflow, to: CatalogWorkflow): WorkflowDiff {
  const patch = structuredPatch(`${from.slug}@${from.version}`, `${to.slug}@${to.version}`, withNewline(from.instructions), withNewline(to.instructions), "", "", { context: 3 });
  const parameters = PARAMETERS.filter((name) => (from[name] === undefined || to[name] === undefined ? from[name] !== to[name] : !jsonEqual(from[name], to[name]))).map((name) => ({ name, from: from[name] ?? null, to: to[name] ?? null }));
  const pinned = (w: CatalogWorkflow, slug: string) => w.contextVersions?.[slug] ?? "latest";
  const changes = compareSchemas(from.schema, to.schema);
  return {
    slug: to.slug,
    from: from.version,
    to: to.version,
    instructions: { hunks: patch.hunks.map(({ oldStart, oldLines, newStart, newLines, lines }) => ({ oldStart, oldLines, newStart, newLines, lines })) },
    parameters,
    contexts: {
      added: to.contexts.filter((c) => !from.contexts.includes(c)),
      removed: from.contexts.filter((c) => !to.contexts.includes(c)),
      repinned: to.contexts.filter((c) => from.contexts.includes(c) && pinned(from, c) !== pinned(to, c)).map((slug) => ({ slug, from: pinned(from, slug), to: pinned(to, slug) })),
    },
    schema: { changes, breaking: changes.some((c) => c.breaking) },
  };
}

/** Line diffs of text without a final newline would mark the last line "\ No newline"; give every text one. */
const withNewline = (text: string) => (text.endsWith("\n") || text === "" ? text : `${text}\n`);
