/**
 * What the benchmarks share: the processes they start (stopped however the benchmark ends), what
 * they read about processes from /proc (Linux), and one percentile rule.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";

const children: ChildProcess[] = [];
process.on("exit", () => children.forEach((c) => c.exitCode === null && c.kill("SIGKILL")));

/** Kills `child` when this process exits, even on a failure (a failed start must not leave servers behind). */
export function stopOnExit<C extends ChildProcess>(child: C): C {
  children.push(child);
  return child;
}

/** A TCP port free on loopback now. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** Resolves once `child` accepts connections on `port`; throws if it exits first or takes over a minute. */
export async function waitForPort(port: number, child: ChildProcess, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => (socket.destroy(), resolve(true)));
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not listen on ${port}`);
}

/**
 * The fake OpenAI-compatible upstream (bench/overhead-upstream.ts) in a process of its own, so that
 * its work is not the load generator's; it holds each request `delayMs` before answering.
 */
export async function startUpstreamProcess(delayMs = 0): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const script = path.join(import.meta.dirname, "overhead-upstream.ts");
  const child = stopOnExit(spawn(process.execPath, [path.join(import.meta.dirname, "..", "bin", "bench.mjs"), script, String(port), String(delayMs)], { stdio: ["ignore", "inherit", "inherit"] }));
  await waitForPort(port, child, "the fake upstream");
  return { url: `http://127.0.0.1:${port}/v1`, child };
}

const TICKS = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;

/** CPU seconds (user + system, all threads) a process has used so far; 0 once it is gone. */
export function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds the whole machine has been busy (all cores, everything but idle and I/O wait) so far. */
export function machineBusy(): number {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3]! + fields[4]!;
  return (fields.slice(0, 8).reduce((a, b) => a + b, 0) - idle) / TICKS;
}

/** A process's resident memory, MiB. */
export const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

/** The nearest-rank percentile. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
