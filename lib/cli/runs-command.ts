import "server-only";
import { runListBounds, runListView, runView } from "../http/run-view";
import { RUN_STATUSES, type RunStatus } from "../domain/run-vocabulary";
import { fail, loadConfigOrExit, openStore, type StorageOptions } from "./common";
import { printTable } from "./keys-command";

export async function runsList(
  options: StorageOptions & { status?: string; workflow?: string; limit?: string; json?: boolean },
  env: NodeJS.ProcessEnv,
  cwd: string,
) {
  const config = loadConfigOrExit(options, env, cwd);
  if (options.status && !(RUN_STATUSES as readonly string[]).includes(options.status)) fail(`--status must be ${RUN_STATUSES.join(", ")}`, 2);
  const limit = Number(options.limit ?? "20");
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) fail("--limit must be 1-1000", 2);
  const store = await openStore(options, env, cwd);
  try {
    const { runs } = await store.runs.list({ status: options.status as RunStatus | undefined, workflowSlug: options.workflow, limit }, runListBounds(config.limits));
    if (options.json) {
      process.stdout.write(`${JSON.stringify(runs.map(runListView))}\n`);
      return;
    }
    printTable(
      ["ID", "OPERATION", "WORKFLOW", "STATUS", "TOKENS IN/OUT", "COST", "MS", "CREATED"],
      runs.map((r) => [r.id, r.operation, r.workflowSlug, r.status, `${r.inputTokens}/${r.outputTokens}`, r.cost, String(r.durationMs ?? ""), r.createdAt]),
    );
  } finally {
    await store.close();
  }
}

export async function runsShow(id: string, options: StorageOptions, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  const store = await openStore(options, env, cwd);
  try {
    const run = await store.runs.get(id);
    if (!run) fail(`no run ${id}`);
    process.stdout.write(`${JSON.stringify(runView(run), null, 2)}\n`);
  } finally {
    await store.close();
  }
}
