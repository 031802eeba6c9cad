import "server-only";
import { AuditLog, changesBetween, CLI_ORIGIN } from "../audit/audit-log";
import { Catalog } from "../catalog/workflow-catalog";
import { LABEL, parseWorkflowRef, WORKFLOW_REF } from "../domain/names";
import { isGenserveError } from "../errors";
import { fail, loadConfigOrExit, openStore, type StorageOptions } from "./common";
import { printTable } from "./keys-command";

/** The key id the command line records as the mover of a label (it acts with the operator's access to storage). */
const OPERATOR = "cli";

/** `genserve workflows label SLUG@VERSION LABEL`: points a label at a version, recorded in its history. */
export async function workflowsLabel(ref: string, label: string, options: StorageOptions & { json?: boolean }, env: NodeJS.ProcessEnv, cwd: string) {
  const config = loadConfigOrExit(options, env, cwd);
  const { slug, selector } = parseWorkflowRef(ref);
  if (!WORKFLOW_REF.test(ref) || selector.kind !== "version") fail(`name the version as SLUG@VERSION (e.g. invoice@4, or invoice@config), not "${ref}"`, 2);
  if (!LABEL.test(label)) fail(`"${label}" is not a label: 1-64 letters, digits, '.', '_' or '-', not a number or "config"`, 2);
  const store = await openStore(options, env, cwd);
  try {
    const move = await new Catalog(config, store).moveLabel(slug, label, selector.version, OPERATOR);
    if (move) await new AuditLog(store).record(CLI_ORIGIN, "workflow.label.move", { kind: "workflow", id: slug }, changesBetween({ [`labels.${label}`]: move.previous }, { [`labels.${label}`]: move.version }));
    if (options.json) process.stdout.write(`${JSON.stringify(move)}\n`);
    else process.stdout.write(`${slug}: ${label} → ${selector.version}${move?.previous ? ` (was ${move.previous})` : ""}\n`);
  } catch (error) {
    if (isGenserveError(error)) fail(error.detail ?? error.message);
    throw error;
  } finally {
    await store.close();
  }
}

/** `genserve workflows labels SLUG`: where each label points, then the history. */
export async function workflowsLabels(slug: string, options: StorageOptions & { json?: boolean }, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  const store = await openStore(options, env, cwd);
  try {
    const history = await store.labels.history(slug);
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ labels: await store.labels.current(slug), history })}\n`);
      return;
    }
    printTable(
      ["WHEN", "LABEL", "OUTCOME", "VERSION", "PREVIOUS", "BY", "EVALUATION"],
      history.map((m) => [m.createdAt, m.label, m.outcome, m.version ?? "", m.previous ?? "", m.keyId, m.evaluationId ?? ""]),
    );
  } finally {
    await store.close();
  }
}
