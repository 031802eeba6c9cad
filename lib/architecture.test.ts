import { readFileSync } from "node:fs";
import path from "node:path";
import { cruise, type IModule } from "dependency-cruiser";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";

// The layers of lib/, checked from the code's own imports (dependency-cruiser reads them): which
// folder may import which, no cycles between folders, and browser-safe modules that never reach a
// server-only one. docs/architecture.md draws the same map.

const ROOT = path.resolve(import.meta.dirname, "..");

/** Every folder (or top-level file) of lib/, and what it may import besides itself. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  // The bottom: shared by everything, importing nothing of genserve's but each other.
  "errors.ts": ["json"],
  json: [],
  domain: [],
  "ids.ts": [],
  net: [],
  // Linear-time matching of JSON Schema patterns (RE2), for validation and the grammar alike.
  regex: [],
  workers: ["errors.ts"],
  // Metrics and traces: told by the layers above, importing none of them.
  observability: [],
  // Configuration and storage.
  config: ["domain"],
  store: ["config", "domain", "errors.ts", "ids.ts"],
  grammar: ["json", "regex", "workers"],
  schema: ["config", "errors.ts", "json", "regex", "workers"],
  keys: ["domain", "errors.ts", "ids.ts", "store"],
  // The audit log: what changes record, over the store only (callers pass who they are).
  audit: ["store"],
  catalog: ["config", "domain", "errors.ts", "json", "schema", "store"],
  models: ["config", "domain", "errors.ts", "grammar", "json", "net", "schema"],
  attachments: ["config", "domain", "errors.ts", "net", "workers"],
  // Where each value of a generated object came from in the sources (alignment, no model).
  grounding: ["domain", "errors.ts", "workers"],
  delivery: ["domain", "errors.ts", "ids.ts", "net", "observability", "store", "workers"],
  // Read-only links to runs and evaluation reports.
  shares: ["errors.ts", "ids.ts", "keys", "store"],
  // People: local accounts, OpenID Connect sign-in, sessions (acting through personal keys).
  people: ["config", "errors.ts", "ids.ts", "keys", "store"],
  // The run pipeline, above everything it orchestrates.
  runs: ["attachments", "catalog", "config", "delivery", "domain", "errors.ts", "grounding", "ids.ts", "json", "keys", "models", "net", "observability", "schema", "store", "workers"],
  // Test suites: expectations, reports, and evaluations executed through the run pipeline.
  evals: ["api", "audit", "catalog", "config", "delivery", "domain", "errors.ts", "grounding", "ids.ts", "json", "keys", "runs", "schema", "store", "workers"],
  // Shapes of the public API (browser-safe); the TypeScript client package built on them (only
  // `fetch`: genserve/client, /react, /ai); the playground's client of the API, which runs on it.
  api: ["domain", "errors.ts"],
  sdk: ["api", "domain", "errors.ts", "json"],
  client: ["api", "domain", "errors.ts", "json", "sdk"],
  // The composition root, the HTTP layer on top of it, and the command line on top of all.
  server: ["audit", "attachments", "catalog", "config", "delivery", "evals", "grammar", "grounding", "keys", "models", "net", "observability", "people", "runs", "schema", "shares", "store"],
  http: ["audit", "api", "delivery", "domain", "errors.ts", "evals", "ids.ts", "json", "keys", "observability", "people", "runs", "schema", "server", "store"],
  cli: ["audit", "api", "catalog", "config", "domain", "errors.ts", "evals", "http", "ids.ts", "keys", "models", "people", "schema", "server", "store"],
};

/** Modules the playground's browser bundle imports: they must never reach a server-only module. */
const BROWSER_ROOTS = ["lib/client", "lib/sdk", "lib/api", "lib/domain", "lib/json", "lib/errors.ts", "lib/schema/guard.ts", "lib/config/schema.ts"];

/** The only modules that may import a database driver: the two backends and what runs their statements. */
const DRIVER_MODULES = ["lib/store/sqlite.ts", "lib/store/sqlite-runner.ts", "lib/store/group-commit.ts", "lib/store/atomic.ts", "lib/store/postgres.ts", "lib/store/postgres-runner.ts"];
/** A string literal holding an SQL statement. */
const SQL_LITERAL = /["'`][^"'`]*\b(SELECT\s[^"'`]*\bFROM|INSERT\s+INTO|DELETE\s+FROM|UPDATE\s+\w+\s+SET)\b/;

const unitOf = (file: string): string | null => {
  const match = /^lib\/([^/]+)(\/|$)/.exec(file);
  return match ? match[1]! : null;
};

let modules: IModule[];
beforeAll(async () => {
  const tsConfig = ts.readConfigFile(path.join(ROOT, "tsconfig.json"), ts.sys.readFile).config as Record<string, unknown>;
  const result = await cruise(
    ["lib"],
    { baseDir: ROOT, tsPreCompilationDeps: true, exclude: { path: ["\\.test\\.ts$", "node_modules"] }, doNotFollow: { path: "node_modules" } },
    undefined,
    { tsConfig },
  );
  modules = (result.output as { modules: IModule[] }).modules.filter((m) => m.source.startsWith("lib/"));
}, 60_000);

/** Folder-level edges: from → to → the file imports that make the edge. */
function folderEdges(): Map<string, Map<string, string[]>> {
  const edges = new Map<string, Map<string, string[]>>();
  for (const module of modules) {
    const from = unitOf(module.source);
    if (!from) continue;
    for (const dependency of module.dependencies) {
      const to = unitOf(dependency.resolved);
      if (!to || to === from) continue;
      const targets = edges.get(from) ?? new Map<string, string[]>();
      targets.set(to, [...(targets.get(to) ?? []), `${module.source} → ${dependency.resolved}`]);
      edges.set(from, targets);
    }
  }
  return edges;
}

describe("the layers of lib/", () => {
  it("reads the whole tree", () => {
    expect(modules.length).toBeGreaterThan(80);
    expect(new Set(modules.map((m) => unitOf(m.source)))).toEqual(new Set(Object.keys(MAY_IMPORT)));
  });

  it("lets each folder import only the folders below it", () => {
    const breaches: string[] = [];
    for (const [from, targets] of folderEdges()) {
      for (const [to, why] of targets) if (!MAY_IMPORT[from]?.includes(to)) breaches.push(`${from} may not import ${to}: ${why.join(", ")}`);
    }
    expect(breaches).toEqual([]);
  });

  it("has no import cycle between folders", () => {
    const edges = folderEdges();
    const cycles: string[] = [];
    const visit = (node: string, trail: string[]) => {
      if (trail.includes(node)) {
        cycles.push([...trail.slice(trail.indexOf(node)), node].join(" → "));
        return;
      }
      for (const next of edges.get(node)?.keys() ?? []) visit(next, [...trail, node]);
    };
    for (const start of edges.keys()) visit(start, []);
    expect(cycles).toEqual([]);
  });

  it("keeps browser-safe modules away from server-only ones, and marks every other module server-only", () => {
    const byFile = new Map(modules.map((m) => [m.source, m]));
    const serverOnly = (file: string) => file.endsWith(".ts") && readFileSync(path.join(ROOT, file), "utf8").includes('import "server-only"');
    const browserSafe = new Set<string>();
    const stack = modules.filter((m) => BROWSER_ROOTS.some((root) => m.source === root || m.source.startsWith(`${root}/`))).map((m) => m.source);
    while (stack.length > 0) {
      const file = stack.pop()!;
      if (browserSafe.has(file) || !file.startsWith("lib/")) continue;
      browserSafe.add(file);
      for (const dependency of byFile.get(file)?.dependencies ?? []) stack.push(dependency.resolved);
    }
    expect([...browserSafe].filter(serverOnly)).toEqual([]);
    const unmarked = modules.map((m) => m.source).filter((file) => file.endsWith(".ts") && !browserSafe.has(file) && !serverOnly(file));
    expect(unmarked).toEqual([]);
  });
});

/** The API's handlers: one file per area of the route table (lib/http/table.ts). */
const HANDLERS = "lib/http/handlers";

describe("the handlers of the API", () => {
  it("reach storage only through services: no `.store`, no value imported from lib/store", () => {
    const files = modules.map((m) => m.source).filter((file) => file.startsWith(`${HANDLERS}/`) || file === "lib/http/metrics-route.ts");
    expect(files.length).toBeGreaterThan(5);
    const breaches: string[] = [];
    for (const file of files) {
      const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), "utf8"), ts.ScriptTarget.Latest, true);
      const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
      const visit = (node: ts.Node) => {
        if (ts.isPropertyAccessExpression(node) && node.name.text === "store") breaches.push(`${at(node)} reads .store`);
        if (ts.isBindingElement(node) && (node.propertyName ?? node.name).getText() === "store") breaches.push(`${at(node)} takes store out of an object`);
        if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
          const target = path.normalize(path.join(path.dirname(file), node.moduleSpecifier.text));
          const named = node.importClause?.namedBindings;
          const typesOnly = node.importClause?.isTypeOnly || (named && ts.isNamedImports(named) && !node.importClause?.name && named.elements.every((e) => e.isTypeOnly));
          if ((target === "lib/store" || target.startsWith("lib/store/")) && !typesOnly) breaches.push(`${at(node)} imports ${node.moduleSpecifier.text}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(breaches).toEqual([]);
  });

  it("are the area files of the table and nothing else: each exports its `endpoints`", () => {
    const files = modules.map((m) => m.source).filter((file) => file.startsWith(`${HANDLERS}/`));
    const without = files.filter((file) => !/^export const endpoints\b/m.test(readFileSync(path.join(ROOT, file), "utf8")));
    expect(without).toEqual([]);
    expect(files.filter((file) => !/^lib\/http\/handlers\/[a-z][a-z-]*\.ts$/.test(file))).toEqual([]);
  });
});

describe("one store implementation", () => {
  it("keeps SQL inside lib/store/", () => {
    const outside = modules.map((m) => m.source).filter((file) => /\.tsx?$/.test(file) && !file.startsWith("lib/store/") && SQL_LITERAL.test(readFileSync(path.join(ROOT, file), "utf8")));
    expect(outside).toEqual([]);
  });

  it("writes each sub-store once, over the runner: only the backends and their runners import a database driver", () => {
    // Read from the source: the cruise leaves node_modules out.
    const drivers = modules.map((m) => m.source).filter((file) => /\.tsx?$/.test(file) && /from\s+["'](better-sqlite3|pg)["']/.test(readFileSync(path.join(ROOT, file), "utf8")));
    expect(drivers).toContain("lib/store/postgres-runner.ts");
    expect(drivers.filter((file) => !DRIVER_MODULES.includes(file))).toEqual([]);
    const stores = modules.map((m) => m.source).filter((file) => file.endsWith("-store.ts"));
    expect(stores.length).toBeGreaterThanOrEqual(9);
  });

  it("leaves the two backends only opening, migrating and moving whole tables: no run, meter, stream or event statement of their own", () => {
    const ownWrites = /\b(INSERT INTO|UPDATE|DELETE FROM)\s+(runs|key_usage|usage_reservations|stream_events|events|deliveries|threads?|thread_messages|evaluations?|catalog_versions)\b/;
    for (const backend of ["lib/store/sqlite.ts", "lib/store/postgres.ts"]) expect(ownWrites.test(readFileSync(path.join(ROOT, backend), "utf8")), backend).toBe(false);
  });
});

describe("files a new engineer can find", () => {
  const sources = () => modules.map((m) => m.source).filter((file) => /\.(ts|tsx|mjs)$/.test(file) && !/\.test\.tsx?$/.test(file));

  it("no two modules of lib/ share a file name (a search for one finds it)", () => {
    const byName = new Map<string, string[]>();
    for (const file of sources()) byName.set(path.basename(file), [...(byName.get(path.basename(file)) ?? []), file]);
    expect([...byName.values()].filter((files) => files.length > 1)).toEqual([]);
  });

  it("no module of lib/ is over 450 lines (the store's contract tests aside)", () => {
    const long = sources()
      .filter((file) => !/^lib\/store\/contract[\w-]*\.ts$/.test(file))
      .map((file) => [file, readFileSync(path.join(ROOT, file), "utf8").split("\n").length] as const)
      .filter(([, lines]) => lines > 450);
    expect(long).toEqual([]);
  });
});
