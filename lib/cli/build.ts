import "server-only";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const INPUTS = ["app", "components", "lib", "public", "instrumentation.ts", "proxy.ts", "next.config.ts", "package.json", "package-lock.json", "tsconfig.json", "postcss.config.mjs"];
const STAMP = path.join(".next", "genserve-build.json");

/** A hash of everything the Next.js build reads, so a stale build is rebuilt. Tests are excluded. */
export function sourceFingerprint(root: string): string {
  const hash = createHash("sha256");
  const visit = (relative: string) => {
    const full = path.join(root, relative);
    if (!existsSync(full)) return;
    const stat = statSync(full);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(full).sort()) visit(path.join(relative, entry));
    } else if (!/\.test\.tsx?$/.test(relative)) {
      hash.update(relative).update("\0").update(readFileSync(full)).update("\0");
    }
  };
  for (const input of INPUTS) visit(input);
  return hash.digest("hex");
}

export function buildIsCurrent(root: string): boolean {
  const stamp = path.join(root, STAMP);
  if (!existsSync(stamp) || !existsSync(path.join(root, ".next", "BUILD_ID"))) return false;
  try {
    return (JSON.parse(readFileSync(stamp, "utf8")) as { fingerprint?: string }).fingerprint === sourceFingerprint(root);
  } catch {
    return false;
  }
}

/** Runs `next build` (output on stderr) and stamps the result with the source fingerprint. */
export async function buildApp(root: string): Promise<void> {
  const fingerprint = sourceFingerprint(root);
  const nextBin = createRequire(path.join(root, "package.json")).resolve("next/dist/bin/next");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [nextBin, "build"], {
      cwd: root,
      stdio: ["ignore", process.stderr, process.stderr],
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`next build failed (exit code ${code})`))));
  });
  writeFileSync(path.join(root, STAMP), JSON.stringify({ fingerprint, builtAt: new Date().toISOString() }));
}

export async function ensureBuild(root: string, say: (message: string) => void): Promise<void> {
  if (buildIsCurrent(root)) return;
  say("building the web application (first start or sources changed; this takes a minute)…");
  await buildApp(root);
}
