import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const BIN = path.join(ROOT, "bin", "genserve.mjs");
const run = promisify(execFile);

export interface GenserveServer {
  url: string;
  dataDir: string;
  configFile?: string;
  /** The admin key printed at first start (null when the data dir already had keys). */
  adminKey: string | null;
  process: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Sends SIGTERM and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function tempDir(prefix = "genserve-test-"): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Writes a genserve.yaml into `dir` and returns its path. */
export function writeConfig(dir: string, yaml: string): string {
  const file = path.join(dir, "genserve.yaml");
  writeFileSync(file, yaml);
  return file;
}

/** Starts `genserve serve` on a free loopback port, exactly as a user would. */
export async function startGenserve(options: {
  configFile?: string;
  dataDir: string;
  cwd?: string;
  env?: Record<string, string>;
  /** Default debug (the suites read the log); benchmarks run as an operator would, at warn. */
  logLevel?: string;
  /** Extra arguments for node itself (for example `--cpu-prof`). */
  nodeArgs?: string[];
}): Promise<GenserveServer> {
  const config = options.configFile ? ["--config", options.configFile] : [];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, "serve", ...config, "--data", options.dataDir, "--port", "0", "--log-level", options.logLevel ?? "debug"], {
    cwd: options.cwd ?? path.dirname(options.configFile ?? options.dataDir),
    env: { ...process.env, ...options.env, NEXT_TELEMETRY_DISABLED: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

  const url = await new Promise<string>((resolve, reject) => {
    // A first start builds the web app (about a minute here).
    const timer = setTimeout(() => reject(new Error(`genserve did not start in time:\n${output}`)), 180_000);
    const check = () => {
      const match = /genserve listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        // The key banner follows the listening line in the same write burst; give it a moment.
        setTimeout(() => resolve(match[1]!), 50);
      }
    };
    child.stdout!.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`genserve exited with ${code} before listening:\n${output}`));
    });
  });
  const key = /^\s+(gs_[A-Za-z0-9_-]{43})$/m.exec(output);
  return {
    url,
    dataDir: options.dataDir,
    configFile: options.configFile,
    adminKey: key ? key[1]! : null,
    process: child,
    output: () => output,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs the genserve CLI against a data dir; resolves with stdout (rejects on a non-zero exit). */
export async function cli(args: string[], options: { dataDir: string; configFile?: string; env?: Record<string, string> }): Promise<string> {
  const extra = options.configFile ? ["--config", options.configFile] : [];
  const { stdout } = await run(process.execPath, [BIN, ...args, "--data", options.dataDir, ...extra], { cwd: ROOT, env: { ...process.env, ...options.env } });
  return stdout;
}

export async function createKey(
  name: string,
  options: { dataDir: string; configFile?: string; admin?: boolean; role?: "viewer" | "editor" | "admin"; project?: string; env?: Record<string, string> },
): Promise<{ id: string; key: string; admin: boolean; role: string; projectId: string; webhookSecret: string }> {
  const flags = [...(options.admin ? ["--admin"] : []), ...(options.role ? ["--role", options.role] : []), ...(options.project ? ["--project", options.project] : [])];
  const stdout = await cli(["keys", "create", "--name", name, "--json", ...flags], options);
  return JSON.parse(stdout) as { id: string; key: string; admin: boolean; role: string; projectId: string; webhookSecret: string };
}

/** An answer's status, headers, text and its JSON when it is JSON (a test reads whichever it needs). */
export async function readReply(response: Response) {
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, json, text };
}

/** POSTs JSON with an API key; returns status, headers and the parsed body. */
export async function post(server: { url: string }, path: string, body: unknown, key: string | null, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "api-key": key } : {}), ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return readReply(response);
}

export async function get(server: { url: string }, path: string, key: string | null) {
  const response = await fetch(`${server.url}${path}`, { headers: key ? { "api-key": key } : {} });
  return readReply(response);
}
