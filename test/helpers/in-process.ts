import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { DocumentExtractor } from "../../lib/attachments/extract";
import { Catalog } from "../../lib/catalog/workflow-catalog";
import { parseConfigText } from "../../lib/config/load";
import { createKey, principalOf } from "../../lib/keys/api-keys";
import type { Principal } from "../../lib/keys/api-keys";
import { ModelRegistry } from "../../lib/models/model-registry";
import type { ModelClient } from "../../lib/models/model-client";
import { RunService } from "../../lib/runs/run-service";
import { StreamHub } from "../../lib/runs/stream-hub";
import { SchemaCompiler } from "../../lib/schema/validator";
import { openSqliteStore } from "../../lib/store/sqlite";
import type { Store } from "../../lib/store/store-types";

const ROOT = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));

/** The configuration the in-process suites run with: one model alias ("mock"), a few workflows. */
export const IN_PROCESS_CONFIG = `
models:
  mock:
    provider: openai-compatible
    baseURL: http://127.0.0.1:9/v1
    model: mock-1
    pricing: { input: 1, output: 2 }
workflows:
  extract:
    model: mock
    instructions: Extract the fields.
    retries: 2
    timeoutMs: 5000
  once:
    model: mock
    retries: 0
    timeoutMs: 5000
  hurried:
    model: mock
    retries: 0
    timeoutMs: 200
limits:
  asyncConcurrency: 1
  validationTimeoutMs: 2000
`;

export interface InProcess {
  runs: RunService;
  store: Store;
  hub: StreamHub;
  principal: Principal;
  close(): Promise<void>;
}

/**
 * The run service wired as the server wires it — a real SQLite file, the schema worker pool, the
 * catalog, the stream hub — with every model alias answered by `model`. No HTTP, no build.
 */
export async function inProcess(model: ModelClient, yaml = IN_PROCESS_CONFIG): Promise<InProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "genserve-inproc-"));
  const config = parseConfigText(yaml, path.join(dir, "genserve.yaml"), {});
  const store = openSqliteStore(dir);
  const logger = pino({ level: "silent" });
  const schemas = new SchemaCompiler(config.limits, { workerFile: path.join(ROOT, "lib/schema/validate-worker.mjs") });
  const extractor = new DocumentExtractor(path.join(ROOT, "lib/attachments/extract-worker.mjs"), config.limits);
  const hub = new StreamHub({ retainMs: config.limits.streamRetentionMs });
  const runs = new RunService({
    config,
    store,
    models: new ModelRegistry(config, {}, () => model),
    schemas,
    extractor,
    catalog: new Catalog(config, store),
    hub,
    logger,
    publicUrl: "http://127.0.0.1:1",
    replicaId: "replica_test",
  });
  await runs.start({ exclusive: true });
  const { record } = await createKey(store, { name: "tester", admin: false });
  return {
    runs,
    store,
    hub,
    principal: principalOf(record),
    async close() {
      await runs.drain(1_000);
      await hub.close();
      await schemas.close();
      await extractor.close();
      await store.close();
    },
  };
}
