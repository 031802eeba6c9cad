import "server-only";
import { GenserveError } from "../errors";
import { mayRead } from "../keys/owner-access";
import type { Principal } from "../keys/api-keys";
import type { Store, SuiteRecord } from "../store/store-types";

// Kept apart from suites.ts: the runtime (evaluations) needs this, and must not load the API's zod
// shapes (lib/api), which register ids in zod's global registry — the Next.js bundle's copy of the
// runtime would register them a second time, and the OpenAPI document refuses an id seen twice.

/** A suite the caller may read (its own, or any for an admin key); another key's is a 404 like a missing one. */
export async function readableSuite(store: Store, caller: Principal, slug: string): Promise<SuiteRecord> {
  const suite = await store.suites.get(slug);
  if (!suite || !mayRead(caller, suite.keyId)) throw new GenserveError("suite_not_found", { detail: `No suite "${slug}" exists for this key.` });
  return suite;
}
