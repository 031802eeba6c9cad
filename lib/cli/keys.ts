import "server-only";
import { createKey } from "../keys/keys";
import { newWebhookSecret } from "../ids";
import { SECRET_OVERLAP_MS } from "../keys/secrets";
import { fail, loadConfigOrExit, openStore, type StorageOptions } from "./common";

export async function keysCreate(options: StorageOptions & { name: string; admin?: boolean; json?: boolean }, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  const store = await openStore(options, env, cwd);
  try {
    const { record, key } = await createKey(store, { name: options.name, admin: options.admin ?? false });
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ id: record.id, name: record.name, key, admin: record.admin, webhookSecret: record.webhookSecret })}\n`);
    } else {
      process.stdout.write(
        `Created ${record.admin ? "admin " : ""}key ${record.id} (${record.name}).\n` +
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
    const keys = (await store.keys.list()).map(({ hash: _hash, webhookSecret: _secret, ...rest }) => rest);
    if (options.json) {
      process.stdout.write(`${JSON.stringify(keys)}\n`);
      return;
    }
    const rows = keys.map((k) => [k.id, k.name, `${k.prefix}…`, k.admin ? "admin" : "", k.createdAt, k.lastUsedAt ?? "never", k.revokedAt ? `revoked ${k.revokedAt}` : "active"]);
    printTable(["ID", "NAME", "KEY", "ROLE", "CREATED", "LAST USED", "STATUS"], rows);
  } finally {
    await store.close();
  }
}

export async function keysRevoke(id: string, options: StorageOptions, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  const store = await openStore(options, env, cwd);
  try {
    if (!(await store.keys.revoke(id, new Date().toISOString()))) fail(`no active key with id ${id}`);
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
