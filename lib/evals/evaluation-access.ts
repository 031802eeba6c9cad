import "server-only";
import { GenserveError } from "../errors";
import { mayRead } from "../keys/owner-access";
import type { Principal } from "../keys/api-keys";
import type { Store, SuiteRecord } from "../store/store-types";

// Kept apart from suite-document.ts: the runtime (evaluations) needs this without loading the API's
// zod shapes (lib/api) and everything they bring.

/** A suite the caller may read (its own; any of its project for an admin or viewer key); another's is a 404 like a missing one. */
export async function readableSuite(store: Store, caller: Principal, slug: string): Promise<SuiteRecord> {
  const suite = await store.suites.get(slug);
  if (!suite || !(await mayRead(store, caller, suite.keyId))) throw new GenserveError("suite_not_found", { detail: `No suite "${slug}" exists for this key.` });
  return suite;
}
