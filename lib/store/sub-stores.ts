import "server-only";
import { auditStore } from "./audit-store";
import { catalogStore } from "./catalog-store";
import { evaluationStore } from "./evaluations-store";
import { eventsStore } from "./events-store";
import { storeHealth } from "./health-store";
import { idempotencyStore } from "./idempotency-store";
import { inboxStore } from "./inboxes";
import { keysStore } from "./keys-store";
import { lifecycleStore } from "./lifecycle-store";
import { membersStore } from "./members-store";
import { peopleStore } from "./people-store";
import { projectsStore } from "./projects-store";
import { quotaCount, quotaUsage } from "./quotas";
import type { StoreRunner } from "./runner";
import { runsStore } from "./runs-store";
import type { SecretBox } from "./secret-box";
import type { Store } from "./store-types";
import { streamsStore } from "./streams-store";
import { threadsStore } from "./threads-store";
import { usageStore } from "./usage-store";

/** What a backend adds to the sub-stores: opening the database, migrating it, moving whole tables, closing. */
export type BackendParts = "kind" | "migrate" | "transfer" | "pool" | "close";

/**
 * Every sub-store over one runner, assembled once for both backends (sqlite.ts, postgres.ts): a new
 * sub-store is wired here, not in each backend. Signing secrets are sealed by `box` on the way in.
 */
export function subStores(runner: StoreRunner, box: SecretBox): Omit<Store, BackendParts> {
  const { catalogVersions, ...lifecycle } = lifecycleStore(runner);
  return {
    ...evaluationStore(runner),
    ...lifecycle,
    ...storeHealth(runner),
    keys: keysStore(runner, box),
    audit: auditStore(runner),
    people: peopleStore(runner, box),
    members: membersStore(runner, box),
    runs: runsStore(runner),
    projects: projectsStore(runner),
    events: eventsStore(runner),
    inboxes: inboxStore(runner),
    quotas: {
      usage: (keyId, at) => quotaUsage(runner, keyId, at),
      count: (keyId, resource, at) => quotaCount(runner, keyId, resource, at),
    },
    catalog: catalogStore(runner, catalogVersions),
    idempotency: idempotencyStore(runner),
    threads: threadsStore(runner),
    usage: usageStore(runner),
    streams: streamsStore(runner),
  };
}
