import { parseWorkflowRef } from "../domain/names";
import "server-only";
import { GenserveError } from "../errors";
import type { Principal } from "./api-keys";

/**
 * Who may read what a key owns (runs, their streams and deliveries): the key itself, and admin
 * keys. Anything else is answered as if it did not exist.
 */
export const mayRead = (caller: Principal, ownerKeyId: string): boolean => caller.admin || caller.keyId === ownerKeyId;

/** Refuses (403 `forbidden`, naming the field at `path`) a workflow outside the key's allowlist. */
export function assertWorkflowAllowed(caller: Principal, ref: string, path: string): void {
  // A key allowed a workflow may run any of its versions and labels.
  const slug = parseWorkflowRef(ref).slug;
  const allowed = caller.limits.workflows;
  if (allowed === null || allowed.includes(slug)) return;
  throw new GenserveError("forbidden", {
    detail: `This key may not run workflow "${slug}"; it may run ${allowed.length ? allowed.map((s) => `"${s}"`).join(", ") : "no workflow"}.`,
    errors: [{ path, message: `workflow "${slug}" is not allowed for this key` }],
  });
}

/**
 * Refuses (403 `forbidden`, naming `path`) a model alias named by a key limited to some workflows,
 * unless it is the workflow's own: such a key runs those workflows as they are configured, their
 * model included — otherwise an allowed workflow would reach any configured model, a priced one too.
 */
export function assertModelAllowed(caller: Principal, model: string | undefined, workflowModel: string, path = "/model"): void {
  if (model === undefined || model === workflowModel || caller.limits.workflows === null) return;
  throw new GenserveError("forbidden", {
    detail: `This key is limited to workflows, which run on their own models: it may not choose model "${model}".`,
    errors: [{ path, message: `model "${model}" is not allowed for this key (it may run its workflows only on their own models)` }],
  });
}
