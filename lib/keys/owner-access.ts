import { parseWorkflowRef } from "../domain/names";
import "server-only";
import { GenserveError } from "../errors";
import type { OwnerScope, Store } from "../store/store-types";
import type { Principal } from "./api-keys";

/**
 * Who may read (and, on routes their role allows, change) what a key owns — runs, their streams and
 * deliveries, suites, evaluations, share links: keys of the owner's project only; there, the key
 * itself, and admin and viewer keys (a viewer's role is to read the project; an editor reaches its
 * own, as keys did before roles). Anything else is answered as if it did not exist.
 */
export const mayReach = (caller: Principal, owner: { keyId: string; projectId: string | null }): boolean =>
  owner.projectId === caller.projectId && (caller.role !== "editor" || caller.keyId === owner.keyId);

/** What the caller's lists hold: its project's (admins and viewers), or its own key's (editors). */
export const listScope = (caller: Principal): OwnerScope => (caller.role === "editor" ? { keyId: caller.keyId } : { projectId: caller.projectId });

// A key never changes project, so the project of each key looked up is kept for the process's life.
const projects = new WeakMap<Store, Map<string, string | null>>();

/** The project of the key that owns something (null: no such key). */
export async function ownerProject(store: Store, keyId: string): Promise<string | null> {
  let known = projects.get(store);
  if (!known) projects.set(store, (known = new Map()));
  if (!known.has(keyId)) known.set(keyId, (await store.keys.get(keyId))?.projectId ?? null);
  return known.get(keyId)!;
}

/** `mayReach` for something owned by `ownerKeyId`, its project looked up. */
export async function mayRead(store: Store, caller: Principal, ownerKeyId: string): Promise<boolean> {
  if (caller.keyId === ownerKeyId) return true;
  return mayReach(caller, { keyId: ownerKeyId, projectId: await ownerProject(store, ownerKeyId) });
}

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
