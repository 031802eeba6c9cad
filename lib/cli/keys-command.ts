import "server-only";
import { keyLimitsInput } from "../api/requests";
import { describeLimits, limitsPatch, limitsView, NO_LIMITS, type KeyLimits } from "../domain/key-limits";
import { createKey } from "../keys/api-keys";
import { DEFAULT_PROJECT_ID, DEFAULT_PROJECT_SLUG, ROLES, type Role } from "../domain/roles";
import { newWebhookSecret } from "../ids";
import { SECRET_OVERLAP_MS } from "../keys/secrets";
import { AuditLog, changesBetween, CLI_ORIGIN } from "../audit/audit-log";
import { fail, loadConfigOrExit, openStore, type StorageOptions } from "./common";

/** The limit flags of `keys create` and `keys update`, as given: strings, "none" to remove a limit. */
export interface LimitFlags {
  rpm?: string;
  tpm?: string;
  concurrency?: string;
  workflows?: string;
  budgetDaily?: string;
  budgetMonthly?: string;
}

const FLAG_OF: Record<string, string> = { rpm: "--rpm", tpm: "--tpm", concurrency: "--concurrency", workflows: "--workflows", budgetDailyUsd: "--budget-daily", budgetMonthlyUsd: "--budget-monthly" };

/** The flags checked by the API's own shape (the same rules and messages); exits naming each bad flag. */
export function parseLimitFlags(flags: LimitFlags): Partial<KeyLimits> {
  const none = (v: string) => v.trim().toLowerCase() === "none";
  const count = (v: string | undefined) => (v === undefined ? undefined : none(v) ? null : /^\s*-?\d+\s*$/.test(v) ? Number(v) : v);
  const input = {
    rpm: count(flags.rpm),
    tpm: count(flags.tpm),
    concurrency: count(flags.concurrency),
    workflows: flags.workflows === undefined ? undefined : none(flags.workflows) ? null : flags.workflows.split(",").map((w) => w.trim()).filter(Boolean),
    budgetDailyUsd: flags.budgetDaily === undefined ? undefined : none(flags.budgetDaily) ? null : flags.budgetDaily,
    budgetMonthlyUsd: flags.budgetMonthly === undefined ? undefined : none(flags.budgetMonthly) ? null : flags.budgetMonthly,
  };
  const parsed = keyLimitsInput.safeParse(Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)), { reportInput: true });
  if (!parsed.success) {
    fail(parsed.error.issues.map((i) => `${FLAG_OF[String(i.path[0])] ?? String(i.path[0])}${i.path.length > 1 ? ` (${i.path.slice(1).join(".")})` : ""}: ${i.message.replace(/\bnull\b/g, "none")}`).join("\n"), 2);
  }
  return limitsPatch(parsed.data);
}

export async function keysCreate(options: StorageOptions & LimitFlags & { name: string; admin?: boolean; role?: string; project?: string; json?: boolean }, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  const limits: KeyLimits = { ...NO_LIMITS, ...parseLimitFlags(options) };
  if (options.role !== undefined && !(ROLES as readonly string[]).includes(options.role)) fail(`--role: must be one of ${ROLES.join(", ")}`, 2);
  if (options.admin && options.role !== undefined && options.role !== "admin") fail("--admin: contradicts --role (it means --role admin)", 2);
  const role = (options.role ?? (options.admin ? "admin" : "editor")) as Role;
  const store = await openStore(options, env, cwd);
  try {
    const project = options.project === undefined ? null : await store.projects.bySlug(options.project);
    if (options.project !== undefined && !project) fail(`--project: no project "${options.project}" (genserve projects list)`, 2);
    const { record, key } = await createKey(store, { name: options.name, role, projectId: project?.id ?? DEFAULT_PROJECT_ID, limits });
    await new AuditLog(store).record({ ...CLI_ORIGIN, projectId: record.projectId }, "key.create", { kind: "key", id: record.id }, changesBetween(null, { name: record.name, role: record.role, project: record.projectId, limits: limitsView(record.limits) }));
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ id: record.id, name: record.name, key, admin: record.admin, role: record.role, projectId: record.projectId, limits: limitsView(record.limits), webhookSecret: record.webhookSecret })}\n`);
    } else {
      process.stdout.write(
        `Created ${record.role} key ${record.id} (${record.name}) in project ${options.project ?? DEFAULT_PROJECT_SLUG}; limits: ${describeLimits(limitsView(record.limits))}.\n` +
          `Callback events of its runs are signed with (Standard Webhooks): ${record.webhookSecret}\n` +
          `The key is shown only once:\n${key}\n`,
      );
    }
  } catch (error) {
    fail((error as Error).message);
  } finally {
    await store.close();
  }
}

export async function keysList(options: StorageOptions & { json?: boolean }, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  const store = await openStore(options, env, cwd);
  try {
    const keys = (await store.keys.list()).map(({ hash: _hash, webhookSecret: _secret, limits, ...rest }) => ({ ...rest, limits: limitsView(limits) }));
    if (options.json) {
      process.stdout.write(`${JSON.stringify(keys)}\n`);
      return;
    }
    const rows = keys.map((k) => [k.id, k.name, `${k.prefix}…`, k.projectId, k.role, k.createdAt, k.lastUsedAt ?? "never", k.revokedAt ? `revoked ${k.revokedAt}` : "active", describeLimits(k.limits)]);
    printTable(["ID", "NAME", "KEY", "PROJECT", "ROLE", "CREATED", "LAST USED", "STATUS", "LIMITS"], rows);
  } finally {
    await store.close();
  }
}

/** Renames a key or changes its limits; runs already admitted keep what they reserved. */
export async function keysUpdate(id: string, options: StorageOptions & LimitFlags & { name?: string; json?: boolean }, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  const limits = parseLimitFlags(options);
  if (options.name !== undefined && (options.name.trim().length === 0 || options.name.trim().length > 200)) fail("--name: must be 1-200 characters", 2);
  const store = await openStore(options, env, cwd);
  try {
    const before = await store.keys.get(id);
    if (!before || !(await store.keys.update(id, { name: options.name?.trim(), limits }))) fail(`no key with id ${id}`);
    const record = (await store.keys.get(id))!;
    const log = new AuditLog(store);
    const origin = { ...CLI_ORIGIN, projectId: record.projectId };
    if (before.name !== record.name) await log.record(origin, "key.rename", { kind: "key", id }, changesBetween({ name: before.name }, { name: record.name }));
    const changed = changesBetween(limitsView(before.limits), limitsView(record.limits));
    if (Object.keys(changed).length > 0) await log.record(origin, "key.limits", { kind: "key", id }, changed);
    if (options.json) process.stdout.write(`${JSON.stringify({ id, name: record.name, limits: limitsView(record.limits) })}\n`);
    else process.stdout.write(`Updated ${id} (${record.name}); limits: ${describeLimits(limitsView(record.limits))}.\n`);
  } finally {
    await store.close();
  }
}

export async function keysRevoke(id: string, options: StorageOptions, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  const store = await openStore(options, env, cwd);
  try {
    const at = new Date().toISOString();
    if (!(await store.keys.revoke(id, at))) fail(`no active key with id ${id}`);
    const projectId = (await store.keys.get(id))?.projectId ?? null;
    await new AuditLog(store).record({ ...CLI_ORIGIN, projectId }, "key.revoke", { kind: "key", id }, changesBetween({ revokedAt: null }, { revokedAt: at }));
    process.stdout.write(`Revoked ${id}.\n`);
  } finally {
    await store.close();
  }
}

export async function keysRotateSecret(id: string, options: StorageOptions & { json?: boolean }, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  const store = await openStore(options, env, cwd);
  try {
    const secret = newWebhookSecret();
    const until = new Date(Date.now() + SECRET_OVERLAP_MS).toISOString();
    if (!(await store.keys.rotateSecret(id, secret, until))) fail(`no key with id ${id}`);
    // The secrets themselves are never logged: the change is that the previous one signs until `until`.
    const projectId = (await store.keys.get(id))?.projectId ?? null;
    await new AuditLog(store).record({ ...CLI_ORIGIN, projectId }, "key.secret.rotate", { kind: "key", id }, { webhookSecret: { before: "(redacted)", after: "(redacted)" }, previousSecretSignsUntil: { after: until } });
    if (options.json) process.stdout.write(`${JSON.stringify({ id, webhookSecret: secret, previousSecretSignsUntil: until })}\n`);
    else process.stdout.write(`New signing secret for ${id} (the old one also signs until ${until}):\n${secret}\n`);
  } finally {
    await store.close();
  }
}

export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  process.stdout.write(`${[line(header), ...rows.map(line)].join("\n")}\n`);
}
