import "server-only";
import { SLUG } from "../domain/names";
import { AuditLog, changesBetween, CLI_ORIGIN } from "../audit/audit-log";
import { newProjectId } from "../ids";
import type { ProjectRecord } from "../store/store-types";
import { fail, loadConfigOrExit, openStore, type StorageOptions } from "./common";
import { printTable } from "./keys-command";

/** `genserve projects create <slug>`: a new project; its keys come from `genserve keys create --project <slug>`. */
export async function projectsCreate(slug: string, options: StorageOptions & { name?: string; json?: boolean }, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  if (!SLUG.test(slug)) fail("<slug>: must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", 2);
  const name = (options.name ?? slug).trim();
  if (name.length === 0 || name.length > 200) fail("--name: must be 1-200 characters", 2);
  const store = await openStore(options, env, cwd);
  try {
    const project: ProjectRecord = { id: newProjectId(), slug, name, createdAt: new Date().toISOString() };
    await store.projects.insert(project).catch((error: Error) => fail(error.message));
    await new AuditLog(store).record({ ...CLI_ORIGIN, projectId: project.id }, "project.create", { kind: "project", id: project.id }, changesBetween(null, { slug, name }));
    if (options.json) process.stdout.write(`${JSON.stringify(project)}\n`);
    else process.stdout.write(`Created project ${slug} (${project.id}). Its first admin key: genserve keys create --project ${slug} --role admin --name <name>\n`);
  } finally {
    await store.close();
  }
}

export async function projectsList(options: StorageOptions & { json?: boolean }, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  const store = await openStore(options, env, cwd);
  try {
    const projects = await store.projects.list();
    if (options.json) process.stdout.write(`${JSON.stringify(projects)}\n`);
    else printTable(["ID", "SLUG", "NAME", "CREATED"], projects.map((p) => [p.id, p.slug, p.name, p.createdAt]));
  } finally {
    await store.close();
  }
}

export async function projectsRename(slug: string, name: string, options: StorageOptions, env: NodeJS.ProcessEnv, cwd: string) {
  loadConfigOrExit(options, env, cwd);
  if (name.trim().length === 0 || name.trim().length > 200) fail("<name>: must be 1-200 characters", 2);
  const store = await openStore(options, env, cwd);
  try {
    const project = await store.projects.bySlug(slug);
    if (!project) fail(`no project "${slug}"`);
    await store.projects.rename(project!.id, name.trim());
    await new AuditLog(store).record({ ...CLI_ORIGIN, projectId: project!.id }, "project.rename", { kind: "project", id: project!.id }, changesBetween({ name: project!.name }, { name: name.trim() }));
    process.stdout.write(`Renamed ${slug} to ${name.trim()}.\n`);
  } finally {
    await store.close();
  }
}
