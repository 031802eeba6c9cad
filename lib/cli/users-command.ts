import "server-only";
import { ROLES, type Role } from "../config/schema";
import { AuditLog, changesBetween, CLI_ORIGIN } from "../audit/audit-log";
import { DEFAULT_PROJECT_ID } from "../domain/roles";
import { isGenserveError } from "../errors";
import { Accounts } from "../people/accounts";
import { fail, loadConfigOrExit, openStore, type StorageOptions } from "./common";

/**
 * `genserve users`: local accounts for installs without an identity provider. A person acts
 * through a personal key created with them, which carries their role (`--role`).
 */

interface LinkOptions extends StorageOptions {
  publicUrl?: string;
}

function siteUrl(options: LinkOptions, configured: string | undefined): string {
  const url = options.publicUrl ?? configured;
  if (!url) fail("set server.publicUrl in genserve.yaml (or pass --public-url https://genserve.example.com): the sign-in link is an address of the site", 2);
  return url.replace(/\/+$/, "");
}

const message = (error: unknown) => (isGenserveError(error) ? error.detail : (error as Error).message);

export async function usersCreate(options: LinkOptions & { email: string; role: string; name?: string }, env: NodeJS.ProcessEnv, cwd: string) {
  const config = loadConfigOrExit(options, env, cwd);
  if (!(ROLES as readonly string[]).includes(options.role)) fail(`--role must be one of ${ROLES.join(", ")}`, 2);
  const site = siteUrl(options, config.server.publicUrl);
  const store = await openStore(options, env, cwd);
  try {
    const accounts = new Accounts(store, config.auth);
    const user = await accounts.create({ email: options.email, name: options.name, role: options.role as Role });
    const token = await accounts.signInToken(user.id);
    await new AuditLog(store).record({ ...CLI_ORIGIN, projectId: DEFAULT_PROJECT_ID }, "member.create", { kind: "person", id: user.id }, changesBetween(null, { email: user.email, role: options.role }));
    process.stdout.write(`Created ${options.role} ${user.email} (${user.id}).\nOne-time sign-in link (15 minutes, single use):\n${site}/auth/link/${token}\n`);
  } catch (error) {
    fail(message(error));
  } finally {
    await store.close();
  }
}

/** A new one-time sign-in link for an existing person. */
export async function usersLink(options: LinkOptions & { email: string }, env: NodeJS.ProcessEnv, cwd: string) {
  const config = loadConfigOrExit(options, env, cwd);
  const site = siteUrl(options, config.server.publicUrl);
  const store = await openStore(options, env, cwd);
  try {
    const accounts = new Accounts(store, config.auth);
    const user = await accounts.byEmail(options.email);
    if (!user) fail(`no person has the email ${options.email}`);
    process.stdout.write(`One-time sign-in link for ${user.email} (15 minutes, single use):\n${site}/auth/link/${await accounts.signInToken(user.id)}\n`);
  } catch (error) {
    fail(message(error));
  } finally {
    await store.close();
  }
}

/** Reads the password from stdin (never an argument: it would show in the process list and shell history). */
export async function usersPassword(options: StorageOptions & { email: string }, env: NodeJS.ProcessEnv, cwd: string, stdin: NodeJS.ReadableStream = process.stdin) {
  const config = loadConfigOrExit(options, env, cwd);
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  const password = Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
  const store = await openStore(options, env, cwd);
  try {
    await new Accounts(store, config.auth).setPassword(options.email, password);
    const person = await new Accounts(store, config.auth).byEmail(options.email);
    // That it changed, never the password (nor its hash).
    if (person) await new AuditLog(store).record({ ...CLI_ORIGIN, projectId: DEFAULT_PROJECT_ID }, "member.password", { kind: "person", id: person.id }, { password: { after: "(redacted)" } });
    process.stdout.write(`Password set for ${options.email.trim().toLowerCase()}; their sessions were ended.\n`);
  } catch (error) {
    fail(message(error));
  } finally {
    await store.close();
  }
}

/** Removes a person's access: they can no longer sign in, and every session of theirs ends. */
export async function usersDisable(options: StorageOptions & { email: string }, env: NodeJS.ProcessEnv, cwd: string) {
  const config = loadConfigOrExit(options, env, cwd);
  const store = await openStore(options, env, cwd);
  try {
    const user = await new Accounts(store, config.auth).disable(options.email);
    await new AuditLog(store).record({ ...CLI_ORIGIN, projectId: DEFAULT_PROJECT_ID }, "member.disable", { kind: "person", id: user.id }, changesBetween({ disabled: false }, { disabled: true }));
    process.stdout.write(`Disabled ${user.email}: they cannot sign in, and their sessions were ended.\n`);
  } catch (error) {
    fail(message(error));
  } finally {
    await store.close();
  }
}
