import "server-only";
import type { Config } from "../config/config-types";
import { listScope } from "../keys/owner-access";
import { readableSuite } from "./evaluation-access";
import { deleteSuite, putSuite } from "./suite-document";
import type { Principal } from "../keys/api-keys";
import type { SchemaCompiler } from "../schema/validator";
import type { EvaluationFilter, EvaluationRecord, Store, SuiteRecord } from "../store/store-types";

/**
 * Test suites and the list of their evaluations as the API reaches them (the handlers never take
 * the store), over the suite functions of suite-document.ts and evaluation-access.ts.
 */
export class SuiteService {
  constructor(
    private readonly store: Store,
    private readonly schemas: Pick<SchemaCompiler, "problems">,
    private readonly limits: Pick<Config["limits"], "suiteBytes" | "suitesPerKey">,
  ) {}

  /** The caller's suites (an admin key's: all). */
  list(caller: Principal): Promise<SuiteRecord[]> {
    return this.store.suites.list(listScope(caller));
  }

  /** A suite the caller may read, else suite_not_found. */
  readable(caller: Principal, slug: string): Promise<SuiteRecord> {
    return readableSuite(this.store, caller, slug);
  }

  put(caller: Principal, slug: string, body: unknown, now: Date): Promise<{ suite: SuiteRecord; created: boolean }> {
    return putSuite(this.store, this.schemas, this.limits, caller, slug, body, now);
  }

  delete(caller: Principal, slug: string): Promise<void> {
    return deleteSuite(this.store, caller, slug);
  }

  /** A suite's evaluations, newest first. */
  evaluations(filter: EvaluationFilter): Promise<EvaluationRecord[]> {
    return this.store.evaluations.list(filter);
  }
}
