import "server-only";
import type { PromptAttachment } from "../attachments/resolve";
import type { GroundedLeaf } from "../domain/grounding";
import { validationError, type FieldError } from "../errors";
import type { SourceDocument } from "../grounding/grounding-types";

/** What an object run does about grounding: its sources, whether it reports, and what must be grounded. */
export interface RunGrounding {
  docs: SourceDocument[];
  /** `grounding: true`: the alignment is returned and stored; otherwise only `x-grounded` is checked. */
  report: boolean;
  /** Instance paths of properties marked `"x-grounded": true` (segments; `*` for any index or name). */
  required: string[][];
}

const MAX_DEPTH = 64;
/** Schema nodes visited at most while following `$ref`s to `x-grounded` marks (the expansion of refs can grow exponentially). */
const MAX_VISITS = 100_000;

/** The run's grounding, or undefined when it neither asks for it nor has `x-grounded` properties. */
export function planGrounding(requested: boolean | undefined, schema: unknown, input: string, attachments: readonly PromptAttachment[]): RunGrounding | undefined {
  const required = groundedPaths(schema);
  if (!requested && required.length === 0) return undefined;
  const docs: SourceDocument[] = [
    { source: "input", text: input },
    ...attachments.map((a) => ({ source: { attachment: a.index }, text: a.text, ...(a.mimeType === "application/pdf" && { pdf: true }) })),
  ];
  return { docs, report: requested === true, required };
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Where a schema marks values `"x-grounded": true`: followed through properties, items,
 * additionalProperties, the combinators, if/then/else and local `$ref`s. A mark on an object or an
 * array covers every leaf under it.
 */
export function groundedPaths(schema: unknown): string[][] {
  // Most schemas mark nothing: one linear pass over the document, refs not followed, says so.
  if (!marksGrounded(schema)) return [];
  const out: string[][] = [];
  let visits = 0;
  const seen = new Set<string>();
  const resolve = (ref: string): unknown => {
    if (!ref.startsWith("#")) return undefined;
    let node: unknown = schema;
    for (const raw of ref.slice(1).split("/").slice(1)) {
      const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      node = isRecord(node) ? node[key] : Array.isArray(node) ? node[Number(key)] : undefined;
    }
    return node;
  };
  const walk = (node: unknown, path: string[], depth: number) => {
    if (!isRecord(node) || depth > MAX_DEPTH) return;
    if (++visits > MAX_VISITS) {
      throw validationError([{ path: "/schema", message: `has "x-grounded" marks under $refs that expand beyond ${MAX_VISITS} schema nodes: mark fewer places, or mark them outside the definitions` }]);
    }
    // A mark covers every value under it: nothing below needs following.
    if (node["x-grounded"] === true) return void out.push(path);
    if (typeof node.$ref === "string") {
      const key = `${node.$ref}@${path.join("/")}`;
      if (!seen.has(key)) {
        seen.add(key);
        walk(resolve(node.$ref), path, depth + 1);
      }
    }
    if (isRecord(node.properties)) for (const [name, sub] of Object.entries(node.properties)) walk(sub, [...path, name], depth + 1);
    if (isRecord(node.additionalProperties)) walk(node.additionalProperties, [...path, "*"], depth + 1);
    if (isRecord(node.patternProperties)) for (const sub of Object.values(node.patternProperties)) walk(sub, [...path, "*"], depth + 1);
    if (isRecord(node.items)) walk(node.items, [...path, "*"], depth + 1);
    for (const list of [node.prefixItems, Array.isArray(node.items) ? node.items : undefined]) if (Array.isArray(list)) list.forEach((sub) => walk(sub, [...path, "*"], depth + 1));
    for (const key of ["allOf", "anyOf", "oneOf"]) if (Array.isArray(node[key])) (node[key] as unknown[]).forEach((sub) => walk(sub, path, depth + 1));
    for (const key of ["if", "then", "else"]) walk(node[key], path, depth + 1);
  };
  walk(schema, [], 0);
  return out;
}

/** Whether any object of the document has `"x-grounded": true`, without following `$ref`s (linear in its size). */
function marksGrounded(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(marksGrounded);
  if (!isRecord(node)) return false;
  if (node["x-grounded"] === true) return true;
  return Object.values(node).some(marksGrounded);
}

const segmentsOf = (pointer: string) => (pointer === "" ? [] : pointer.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~")));

const covers = (path: readonly string[], segments: readonly string[]) => path.length <= segments.length && path.every((p, i) => p === "*" || p === segments[i]);

const WHY: Record<string, string> = {
  not_found: "was not found in the input or the attachments",
  too_short: "is too short to be found in the input or the attachments",
  contradicted: "is contradicted by the input or the attachments",
  budget: "could not be checked against the input and attachments within the grounding budget",
};

/** A validation-style problem for each leaf under an `x-grounded` path that was not grounded. */
export function ungroundedProblems(leaves: readonly GroundedLeaf[], required: readonly string[][]): FieldError[] {
  if (required.length === 0) return [];
  return leaves
    .filter((leaf) => leaf.match === "none" && required.some((path) => covers(path, segmentsOf(leaf.pointer))))
    .map((leaf) => ({ path: leaf.pointer, message: `${WHY[leaf.reason ?? "not_found"]} (x-grounded: use only values written in the sources)` }));
}
