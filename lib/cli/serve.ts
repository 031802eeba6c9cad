import "server-only";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";
import next from "next";
import { GenserveError, toProblem } from "../errors";
import { AuditLog, changesBetween, FIRST_START_ORIGIN } from "../audit/audit-log";
import { createFirstKey } from "../keys/api-keys";
import { setBootOptions } from "../server/boot";
import { createLogger } from "../server/logger";
import { describeStore } from "../store/open";
import type { Config } from "../config/config-types";
import { ensureModelFile, formatProgress, type ModelFile } from "../models/model-source";
import type { Logger } from "pino";
import { getRuntime } from "../server/runtime";
import { SECURITY_HEADERS } from "../../next.config";
import { loadApiRoutes, type ApiRoutes } from "./api-routes";
import { ensureBuild } from "./build";
import { createStaticAssets, type StaticAssets } from "./static-assets";
import { stampPeer, trustedProxies } from "./client-address";
import { loadConfigOrExit, openStore, PACKAGE_ROOT, resolveDataDir, storeLocation, VERSION, type StorageOptions } from "./common";

export interface ServeOptions extends StorageOptions {
  port?: string;
  host?: string;
  logLevel?: string;
  /** Next.js development mode (hot reload); no build needed. */
  dev?: boolean;
}

interface ShutdownTarget {
  shutdown(graceMs: number): Promise<void>;
}

/**
 * `genserve serve`: validates the configuration, prepares storage (migrations, interrupted runs,
 * first admin key), builds the web app if needed, then runs Next.js in this process behind a plain
 * node:http server so that shutdown can be graceful.
 */
export async function serve(options: ServeOptions, env: NodeJS.ProcessEnv, cwd: string): Promise<void> {
  const logLevel = options.logLevel ?? env.LOG_LEVEL ?? "info";
  const log = createLogger(logLevel);
  // A promise rejected where nobody listens (a library's background retry, say) is logged; it does
  // not take the server and its in-flight runs down.
  process.on("unhandledRejection", (reason) => log.error({ err: { message: (reason as Error)?.message ?? String(reason) } }, "unhandled rejection"));
  const config = loadConfigOrExit(options, env, cwd);
  const dataDir = resolveDataDir(options, env, cwd);
  const port = parsePort(options.port ?? env.PORT ?? "8080");
  const host = options.host ?? env.HOST ?? "127.0.0.1";

  // Migrations run here, once (under a lock on PostgreSQL, so replicas starting together migrate
  // once); runs a previous process left running are recovered by the runtime (lib/server/runtime.ts)
  // before the first request, through the run pipeline's own failure path.
  const location = storeLocation(options, env, cwd, config);
  log.info({ storage: describeStore(location) }, "opening storage");
  const store = await openStore(options, env, cwd);
  // Only a data dir that never had a key gets one: revoking every key does not mint a new admin.
  const firstKey = await createFirstKey(store);
  if (firstKey) await new AuditLog(store).record(FIRST_START_ORIGIN, "key.create", { kind: "key", id: firstKey.record.id }, changesBetween(null, { name: firstKey.record.name, role: firstKey.record.role, project: firstKey.record.projectId }));
  await store.close();

  if (config.file === null) log.info("no configuration file (genserve.yaml): embedded defaults, the local model and a `default` workflow");
  else log.info({ file: config.file, workflows: Object.keys(config.workflows).length, models: Object.keys(config.models).length }, "configuration loaded");
  const localModels = await resolveLocalModels(config, dataDir, log);

  if (!options.dev) await ensureBuild(PACKAGE_ROOT, (message) => log.info(message));

  let handle: ((req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>) | undefined;
  let api: ApiRoutes | undefined;
  let assets: StaticAssets | undefined;
  const proxies = trustedProxies(config.server.trustedProxies);
  // Time-outs are checked this often (Node's default, 30 s, would let a 10 s limit run to 40 s).
  const server = http.createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
    if (!handle) {
      res.writeHead(503, { "Content-Type": "application/problem+json", "Retry-After": "1" });
      res.end(JSON.stringify(toProblem(new GenserveError("service_unavailable", { detail: "The server is starting." }))));
      return;
    }
    if (!toOriginForm(req)) {
      res.writeHead(400, { "Content-Type": "application/problem+json", Connection: "close" });
      res.end(JSON.stringify(toProblem(new GenserveError("validation_failed", { detail: "The request target must be a path (origin-form) or an absolute http(s) URL." }))));
      return;
    }
    // Every request, API or page, carries the client's address as this server worked it out (never a
    // client's copy): sign-in limits and session records read it.
    stampPeer(req, proxies);
    if (api?.handles(pathOf(req.url))) void api.listener(req, res);
    else if (assets) {
      const next = handle;
      // Anything the compressed path cannot answer (or fails at) is Next.js's to answer.
      void assets.serve(req, res).then(
        async (served) => {
          if (!served) await next(req, res);
        },
        async () => {
          if (res.headersSent) res.destroy();
          else await next(req, res);
        },
      );
    } else void handle(req, res);
  });
  // Receiving a request (headers, then the body) is bounded, so a client that trickles bytes cannot
  // hold a connection forever; sending the response is not (streams and long runs are bounded by
  // workflow time-outs instead).
  server.headersTimeout = config.server.headersTimeoutMs;
  server.requestTimeout = config.server.requestTimeoutMs;
  server.keepAliveTimeout = config.server.keepAliveTimeoutMs;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // A burst of connections (thousands of clients opening streams at once) waits in the kernel's
    // queue instead of being dropped and retried seconds later; Linux caps it at net.core.somaxconn.
    server.listen({ port, host, backlog: 4096 }, resolve);
  });
  const address = server.address() as AddressInfo;
  const shownHost = host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  const url = `http://${shownHost}:${address.port}`;
  const publicUrl = (config.server.publicUrl ?? url).replace(/\/+$/, "");
  setBootOptions({ config, dataDir, appRoot: PACKAGE_ROOT, logLevel, version: VERSION, localModels, publicUrl, databaseUrl: location.databaseUrl });
  // The process's one runtime (store, pools, run service), built here; Next.js's copy of the modules
  // finds it (lib/server/runtime.ts) rather than building another.
  const runtime = getRuntime();
  const app = next({ dev: options.dev ?? false, dir: PACKAGE_ROOT, hostname: host, port: address.port, customServer: true });
  await app.prepare();
  // The API's routes are served without Next.js's request pipeline (see api-routes.ts); pages through
  // it. In development Next.js serves everything, so that route files reload.
  if (!options.dev) {
    api = await loadApiRoutes(path.join(PACKAGE_ROOT, "app"), { prefixes: ["/api", "/v1", "/auth", "/healthz", "/readyz", "/metrics"], headers: SECURITY_HEADERS });
    log.debug({ routes: api.count }, "API routes served directly");
    assets = createStaticAssets(path.join(PACKAGE_ROOT, ".next"), SECURITY_HEADERS);
  }
  // Runs a previous process left running are recovered before the first request is served.
  await runtime.ready;
  handle = app.getRequestHandler();

  log.info({ url, publicUrl, dataDir, version: VERSION }, "genserve listening");
  if (!config.server.publicUrl) {
    // Browsers' sessions are checked against this address (Origin) and get Secure cookies from its scheme.
    log.warn(
      { url },
      "server.publicUrl is not set: browsers that sign in must reach genserve at this address; behind a reverse proxy (https) set server.publicUrl to the address they use, so that cookies are Secure, sign-in links and the OIDC redirect are right and Origin checks pass",
    );
  }
  process.stdout.write(`genserve listening on ${url}\n`);
  for (const [alias, found] of Object.entries(localModels)) {
    if (!found.ok) process.stdout.write(`\nModel "${alias}" is not available: ${found.detail}\n${found.fix}\nRuns on it answer 503 model_unavailable until then.\n`);
  }
  if (firstKey) {
    process.stdout.write(
      `\nNo API key existed, so an admin key was created. It is shown only this once:\n\n  ${firstKey.key}\n\nOpen ${url} and sign in with it, or send it as the Api-Key header.\n\n`,
    );
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, "shutting down: no new connections, finishing in-flight runs");
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const runtime = (globalThis as Record<symbol, ShutdownTarget | undefined>)[Symbol.for("genserve.runtime")];
    try {
      await runtime?.shutdown(config.limits.shutdownGraceMs);
    } catch (error) {
      log.error({ err: { message: (error as Error).message } }, "error during shutdown");
    }
    // Runs are done; let their responses finish writing, closing connections as they fall idle.
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    clearInterval(idle);
    server.closeAllConnections();
    log.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

/**
 * Puts a request's target in origin-form ("/path?query"). An absolute-form target
 * (`GET http://evil.example/x HTTP/1.1`, which HTTP/1.1 servers must accept) keeps only its path
 * and query: its authority is never used — Next.js answered such a request with a redirect to
 * the host named in it. False for anything else (`*`, a bare authority), which is refused.
 */
export function toOriginForm(req: { url?: string }): boolean {
  const target = req.url ?? "";
  if (target.startsWith("/")) return true;
  if (!/^https?:\/\//i.test(target)) return false;
  try {
    const url = new URL(target);
    req.url = `${url.pathname}${url.search}`;
    return true;
  } catch {
    return false;
  }
}

/** The path of a request target ("/a/b?x" → "/a/b"); Next.js handles anything unusual. */
function pathOf(url: string | undefined): string {
  if (!url || url[0] !== "/") return "";
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`genserve: invalid port "${value}" (0-65535)\n`);
    process.exit(2);
  }
  return port;
}

/**
 * Finds each local model's file, downloading hf:/http(s) sources into <data dir>/models with a
 * progress line on the terminal. A model that cannot be had does not stop the server: its runs
 * answer 503 with the reason, and the download is tried again on the next start.
 */
export async function resolveLocalModels(config: Config, dataDir: string, log: Logger): Promise<Record<string, ModelFile>> {
  const found: Record<string, ModelFile> = {};
  for (const model of Object.values(config.models)) {
    if (model.provider !== "llama-cpp" || !model.path) continue;
    const tty = process.stderr.isTTY;
    let lastShown = 0;
    let lastDecile = -1;
    const result = await ensureModelFile(model.path, dataDir, (progress) => {
      const now = Date.now();
      if (tty) {
        if (now - lastShown < 200 && progress.downloadedBytes < progress.totalBytes) return;
        lastShown = now;
        process.stderr.write(`\r\x1b[2Kdownloading ${formatProgress(progress)}`);
      } else {
        const decile = progress.totalBytes ? Math.floor((progress.downloadedBytes / progress.totalBytes) * 10) : 0;
        if (decile !== lastDecile) {
          lastDecile = decile;
          process.stderr.write(`downloading ${formatProgress(progress)}\n`);
        }
      }
    });
    if (tty && lastShown) process.stderr.write("\n");
    if (result.ok) log.info({ alias: model.alias, file: result.file }, "local model file ready");
    else log.error({ alias: model.alias, source: model.path, detail: result.detail }, "local model not available");
    found[model.alias] = result;
  }
  return found;
}
