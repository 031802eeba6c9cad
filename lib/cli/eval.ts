import "server-only";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createParser } from "eventsource-parser";
import { parse as parseYaml } from "yaml";
import { suiteDocumentSchema, type CreateEvaluationRequest, type EvaluationReport } from "../api/suite-shapes";
import { SLUG } from "../domain/names";
import { isGenserveError, toProblem, zodFieldErrors, type FieldError } from "../errors";
import { junitXml } from "../evals/junit";
import { reportText } from "./eval-report";
import { putSuite } from "../evals/suite-document";
import { authenticate, principalOf, type Principal } from "../keys/api-keys";
import { createRuntime, type Runtime } from "../server/runtime";
import { loadConfigOrExit, openStore, PACKAGE_ROOT, resolveDataDir, storeLocation, VERSION, type StorageOptions } from "./common";
import { resolveLocalModels } from "./serve";
import { createLogger } from "../server/logger";

export interface EvalOptions extends StorageOptions {
  workflow?: string;
  model?: string;
  repeat?: string;
  concurrency?: string;
  baseline?: string;
  minPass?: string;
  junit?: string;
  json?: boolean;
  url?: string;
  apiKey?: string;
}

/** Exit codes: the pass rate met --min-pass; it did not; the suite or the setup is wrong. */
const PASSED = 0;
const BELOW = 1;
const SETUP = 2;

class SetupError extends Error {}

const MIME_BY_EXTENSION: Record<string, string> = {
  ".pdf": "application/pdf",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  ".html": "text/html",
  ".htm": "text/html",
  ".txt": "text/plain",
  ".md": "text/markdown",
  ".csv": "text/csv",
  ".json": "application/json",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".webp": "image/webp",
  ".gif": "image/gif",
};

/**
 * A suite file (YAML or JSON) as the document the API takes: `schemaFile` read into `schema`, and
 * attachments given as paths (relative to the file) read into inline base64 content.
 */
export function readSuiteFile(file: string): { slug: string; document: Record<string, unknown> } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new SetupError(`cannot read ${file}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: 100 });
  } catch (error) {
    throw new SetupError(`${file} is not valid YAML or JSON: ${(error as Error).message}`);
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new SetupError(`${file} must hold a suite (a mapping with cases)`);
  const document = { ...(raw as Record<string, unknown>) };
  const dir = path.dirname(path.resolve(file));
  if (typeof document.schemaFile === "string") {
    const schemaPath = path.resolve(dir, document.schemaFile);
    try {
      document.schema = parseYaml(readFileSync(schemaPath, "utf8")) as unknown;
    } catch (error) {
      throw new SetupError(`schemaFile ${schemaPath}: ${(error as Error).message}`);
    }
    delete document.schemaFile;
  }
  if (Array.isArray(document.cases)) {
    document.cases = document.cases.map((c: unknown) => {
      if (c === null || typeof c !== "object" || !Array.isArray((c as { attachments?: unknown }).attachments)) return c;
      const attachments = ((c as { attachments: unknown[] }).attachments).map((a) => {
        if (a === null || typeof a !== "object" || typeof (a as { file?: unknown }).file !== "string") return a;
        const given = a as { file: string; mimeType?: string };
        if (/^(https?:|data:)/i.test(given.file)) return a;
        const full = path.resolve(dir, given.file);
        let bytes: Buffer;
        try {
          bytes = readFileSync(full);
        } catch (error) {
          throw new SetupError(`attachment ${full}: ${(error as Error).message}`);
        }
        const mimeType = given.mimeType ?? MIME_BY_EXTENSION[path.extname(full).toLowerCase()];
        if (!mimeType) throw new SetupError(`attachment ${full}: say its mimeType (the extension is not one genserve knows)`);
        return { file: bytes.toString("base64"), mimeType };
      });
      return { ...c, attachments };
    });
  }
  const named = typeof document.suite === "string" ? document.suite : path.basename(file).replace(/\.(ya?ml|json)$/i, "");
  if (!SLUG.test(named)) throw new SetupError(`the suite's slug "${named}" is not valid (letters, digits, '.', '_' or '-'); set suite: in the file`);
  return { slug: named, document };
}

const number = (value: string | undefined, name: string, check: (n: number) => boolean): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || !check(n)) throw new SetupError(`${name} is not valid: ${value}`);
  return n;
};

/** Where the evaluation runs: a running server, or this process on the data directory. */
interface Backend {
  putSuite(slug: string, document: Record<string, unknown>): Promise<void>;
  start(slug: string, request: CreateEvaluationRequest): Promise<string>;
  /** Resolves with the final report; `progress` is told the counts as results come. */
  follow(id: string, progress: (done: number, total: number, passed: number) => void): Promise<EvaluationReport>;
  close(): Promise<void>;
}

/** Problems a server answered with, as an error to print. */
class Refused extends Error {
  constructor(readonly problem: { title?: string; detail?: string; code?: string; errors?: FieldError[] }) {
    super(problem.detail ?? problem.title ?? "refused");
  }
}

function remoteBackend(url: string, key: string): Backend {
  const base = url.replace(/\/+$/, "");
  const call = async (method: string, pathname: string, body?: unknown) => {
    let response: Response;
    try {
      response = await fetch(`${base}${pathname}`, { method, headers: { "api-key": key, ...(body !== undefined && { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      throw new SetupError(`cannot reach ${base}: ${(error as Error).message}`);
    }
    const json = (await response.json().catch(() => null)) as Record<string, unknown> | null;
    if (!response.ok) throw new Refused(json ?? { detail: `HTTP ${response.status}` });
    return json!;
  };
  return {
    async putSuite(slug, document) {
      await call("PUT", `/api/v1/suites/${encodeURIComponent(slug)}`, document);
    },
    async start(slug, request) {
      return (await call("POST", `/api/v1/suites/${encodeURIComponent(slug)}/evaluations`, request)).id as string;
    },
    // Progress from the evaluation's event stream (resumed after its last result if the connection
    // drops), then the whole report once, when it has ended.
    async follow(id, progress) {
      let lastEventId = "0";
      for (let ended = false; !ended; ) {
        let response: Response;
        try {
          response = await fetch(`${base}/api/v1/evaluations/${id}/events`, { headers: { "api-key": key, "last-event-id": lastEventId } });
        } catch {
          await new Promise((r) => setTimeout(r, 1_000));
          continue;
        }
        if (!response.ok || !response.body) throw new Refused(((await response.json().catch(() => null)) as Record<string, unknown> | null) ?? { detail: `HTTP ${response.status}` });
        const parser = createParser({
          onEvent(event) {
            if (event.event === "result" && event.id) lastEventId = event.id;
            else if (event.event === "progress") {
              const p = JSON.parse(event.data) as { done: number; total: number; passed: number };
              progress(p.done, p.total, p.passed);
            } else if (event.event === "end") ended = true;
          },
        });
        const decoder = new TextDecoder();
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
      }
      return (await call("GET", `/api/v1/evaluations/${id}`)) as unknown as EvaluationReport;
    },
    async close() {},
  };
}

async function inProcessBackend(options: EvalOptions, env: NodeJS.ProcessEnv, cwd: string): Promise<Backend> {
  const config = loadConfigOrExit(options, env, cwd);
  const dataDir = resolveDataDir(options, env, cwd);
  // Migrated here, once; the runtime opens its own handle.
  await (await openStore(options, env, cwd)).close();
  const logLevel = env.LOG_LEVEL ?? "warn";
  const localModels = await resolveLocalModels(config, dataDir, createLogger(logLevel));
  // A server may be running on the same data: this process reconciles nothing it does not hold.
  const runtime: Runtime = createRuntime({
    config,
    dataDir,
    appRoot: PACKAGE_ROOT,
    logLevel,
    version: VERSION,
    localModels,
    publicUrl: config.server.publicUrl ?? "http://localhost",
    databaseUrl: storeLocation(options, env, cwd, config).databaseUrl,
    shared: true,
  });
  await runtime.ready;
  let principal: Principal;
  if (options.apiKey ?? env.GENSERVE_API_KEY) {
    principal = await authenticate(runtime.store, (options.apiKey ?? env.GENSERVE_API_KEY)!);
  } else {
    const admin = (await runtime.store.keys.list()).find((k) => k.admin && k.revokedAt === null);
    if (!admin) throw new SetupError("no admin key exists in this data directory yet (start `genserve serve` once, or pass --api-key)");
    principal = principalOf(admin);
  }
  return {
    async putSuite(slug, document) {
      await putSuite(runtime.store, runtime.schemas, runtime.config.limits, principal, slug, document, new Date());
    },
    async start(slug, request) {
      return (await runtime.evaluations.create(principal, slug, request)).id;
    },
    async follow(id, progress) {
      for (;;) {
        const evaluation = await runtime.evaluations.readable(principal, id);
        const totals = await runtime.evaluations.totals(evaluation);
        progress(totals.done, totals.runs, totals.passed);
        if (!["queued", "running"].includes(evaluation.status)) return runtime.evaluations.report(principal, id);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 1_000);
          const stop = runtime.evaluations.subscribe(id, () => {
            clearTimeout(timer);
            stop();
            resolve();
          });
        });
      }
    },
    async close() {
      // The callback, if any, was queued: give the delivery worker its attempt before stopping.
      await runtime.shutdown(config.limits.shutdownGraceMs);
    },
  };
}

function progressBar(stream: NodeJS.WriteStream) {
  let last = "";
  return {
    update(done: number, total: number, passed: number) {
      if (!stream.isTTY) return;
      const width = 30;
      const filled = total === 0 ? 0 : Math.round((done / total) * width);
      const line = `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total}  passed ${passed}  failed ${done - passed}`;
      if (line !== last) stream.write(`\r${line}`);
      last = line;
    },
    end() {
      if (stream.isTTY && last) stream.write("\n");
    },
  };
}

/** `genserve eval FILE`: puts the suite, runs one evaluation, reports it, and exits by its pass rate. */
export async function evaluate(file: string, options: EvalOptions, env: NodeJS.ProcessEnv, cwd: string): Promise<void> {
  let backend: Backend | undefined;
  let code = SETUP;
  try {
    const { slug, document } = readSuiteFile(path.resolve(cwd, file));
    const shape = suiteDocumentSchema.safeParse(document);
    if (!shape.success) throw new Refused({ detail: "The suite is not valid.", errors: zodFieldErrors(shape.error) });
    const minPass = number(options.minPass, "--min-pass", (n) => n >= 0 && n <= 1) ?? 1;
    const request: CreateEvaluationRequest = {
      ...(options.workflow && { workflowSlug: options.workflow }),
      ...(options.model && { model: options.model }),
      ...(options.repeat && { repeat: number(options.repeat, "--repeat", (n) => Number.isInteger(n) && n >= 1)! }),
      ...(options.concurrency && { concurrency: number(options.concurrency, "--concurrency", (n) => Number.isInteger(n) && n >= 1)! }),
      ...(options.baseline && { baseline: options.baseline }),
    };
    const url = options.url ?? env.GENSERVE_URL;
    if (url) {
      const key = options.apiKey ?? env.GENSERVE_API_KEY;
      if (!key) throw new SetupError("--url needs an API key: --api-key or GENSERVE_API_KEY");
      backend = remoteBackend(url, key);
    } else {
      backend = await inProcessBackend(options, env, cwd);
    }
    await backend.putSuite(slug, { ...document, suite: slug });
    const id = await backend.start(slug, request);
    const bar = progressBar(process.stderr);
    const report = await backend.follow(id, (done, total, passed) => bar.update(done, total, passed));
    bar.end();
    if (options.junit) writeFileSync(path.resolve(cwd, options.junit), junitXml(report));
    if (options.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else process.stdout.write(reportText(report));
    if (report.status !== "completed") {
      process.stderr.write(`genserve: the evaluation ${report.status}${report.error ? `: ${report.error.code}: ${report.error.detail}` : ""}\n`);
      code = report.status === "failed" ? SETUP : BELOW;
    } else {
      code = (report.totals.passRate ?? 0) >= minPass ? PASSED : BELOW;
      if (code === BELOW) process.stderr.write(`genserve: pass rate ${report.totals.passRate ?? 0} is below ${minPass}\n`);
    }
  } catch (error) {
    code = SETUP;
    if (error instanceof SetupError) process.stderr.write(`genserve: ${error.message}\n`);
    else {
      const problem = error instanceof Refused ? error.problem : isGenserveError(error) ? toProblem(error) : null;
      if (!problem) throw error;
      process.stderr.write(`genserve: ${problem.detail ?? problem.title}\n${(problem.errors ?? []).map((e) => `  ${e.path || "(suite)"}: ${e.message}\n`).join("")}`);
    }
  } finally {
    await backend?.close();
  }
  process.exitCode = code;
}
