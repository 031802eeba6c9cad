import "server-only";
import { isGenserveError, type FieldError } from "../errors";
import { assertWorkflowAllowed } from "../keys/owner-access";
import type { Principal } from "../keys/api-keys";
import type { SchemaSupport } from "../models/model-client";
import type { PreparedSchema } from "../schema/validator";
import type { PlannerDeps } from "./plan";

export interface SchemaCheck {
  accepted: boolean;
  problems: FieldError[];
  warnings: string[];
  model: { alias: string; provider: string } | null;
  support: SchemaSupport | null;
}

/**
 * What an object run would make of a schema, without running anything: the problems it would be
 * refused for, the warnings it would record, and — for a workflow — how its model holds outputs to
 * the schema (the local engine's grammar: exact, or what is checked after generation; a provider's
 * structured output and, for OpenAI, why strict mode is off). The playground lints with it as the
 * schema is edited.
 */
export async function checkSchema(deps: PlannerDeps, principal: Principal, request: { schema: Record<string, unknown>; workflowSlug?: string }): Promise<SchemaCheck> {
  let model: SchemaCheck["model"] = null;
  let client;
  if (request.workflowSlug !== undefined) {
    assertWorkflowAllowed(principal, request.workflowSlug, "/workflowSlug");
    const workflow = await deps.catalog.forProject(principal.projectId).resolve(request.workflowSlug);
    model = { alias: workflow.model, provider: deps.config.models[workflow.model]!.provider };
    client = deps.models.get(workflow.model);
  }
  const refusal = (error: unknown): FieldError[] => {
    if (isGenserveError(error) && error.code === "validation_failed" && error.errors) return error.errors;
    throw error;
  };
  let prepared: PreparedSchema;
  try {
    prepared = await deps.schemas.prepare(request.schema);
  } catch (error) {
    return { accepted: false, problems: refusal(error), warnings: [], model, support: null };
  }
  let support: SchemaSupport | null = null;
  try {
    support = client ? await client.schemaSupport({ schema: prepared.schema, hash: prepared.hash }) : null;
  } catch (error) {
    // A schema no value satisfies is found by the grammar compiler.
    return { accepted: false, problems: refusal(error), warnings: prepared.warnings, model, support: null };
  }
  return { accepted: true, problems: [], warnings: prepared.warnings, model, support };
}
