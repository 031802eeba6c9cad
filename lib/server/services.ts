import "server-only";
import { AuditLog } from "../audit/audit-log";
import type { Config } from "../config/config-types";
import { InboxService } from "../delivery/inbox-service";
import { KeyAdmin } from "../keys/key-admin";
import { People } from "../people/people-service";
import { ProjectAdmin } from "../keys/project-admin";
import { IdempotencyLedger } from "../runs/idempotency-ledger";
import { RunQueries } from "../runs/run-queries";
import { ThreadService } from "../runs/thread-service";
import type { SchemaCompiler } from "../schema/validator";
import { ShareLinks } from "../shares/share-links";
import type { Store } from "../store/store-types";
import { SuiteService } from "../evals/suite-service";

/**
 * What the API's handlers ask of storage, each from the layer that owns it: handlers reach the store
 * only through these and the runtime's other services (checked by lib/architecture.test.ts).
 */
export interface Services {
  keys: KeyAdmin;
  projects: ProjectAdmin;
  runs: RunQueries;
  threads: ThreadService;
  idempotency: IdempotencyLedger;
  inboxes: InboxService;
  shares: ShareLinks;
  suites: SuiteService;
  /** People: sign-in (local accounts, OpenID Connect) and sessions. */
  people: People;
  /** The audit log: who changed what, when, from where. */
  audit: AuditLog;
}

export function createServices(deps: { store: Store; config: Config; schemas: SchemaCompiler; publicUrl: string }): Services {
  const { store, config, schemas, publicUrl } = deps;
  const limits = config.limits;
  return {
    keys: new KeyAdmin(store, limits),
    projects: new ProjectAdmin(store),
    runs: new RunQueries(store),
    threads: new ThreadService(store, limits.threadsPerKey),
    idempotency: new IdempotencyLedger(store),
    inboxes: new InboxService(store, publicUrl),
    shares: new ShareLinks(store, limits.sharesPerKey),
    suites: new SuiteService(store, schemas, limits),
    people: new People(store, config, publicUrl),
    audit: new AuditLog(store),
  };
}
