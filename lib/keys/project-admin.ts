import "server-only";
import { DEFAULT_PROJECT_ID } from "../domain/roles";
import { GenserveError } from "../errors";
import { newProjectId } from "../ids";
import type { ProjectRecord, Store } from "../store/store-types";
import type { Principal } from "./api-keys";

/**
 * Projects as admin keys manage them. The default project's admins run the install: they list,
 * create and rename every project (and create keys in them, lib/keys/key-admin.ts). An admin of
 * another project sees and renames only its own: other projects' names are not its to know.
 */
export class ProjectAdmin {
  constructor(private readonly store: Store) {}

  /** The caller's own project (every key has one). */
  async own(caller: Principal): Promise<ProjectRecord> {
    const project = await this.store.projects.get(caller.projectId);
    if (!project) throw new GenserveError("not_found", { detail: "This key's project no longer exists." });
    return project;
  }

  async list(caller: Principal): Promise<ProjectRecord[]> {
    return runsInstall(caller) ? this.store.projects.list() : [await this.own(caller)];
  }

  async create(caller: Principal, input: { slug: string; name?: string }): Promise<ProjectRecord> {
    if (!runsInstall(caller)) throw new GenserveError("forbidden", { detail: "Only admin keys of the default project create projects." });
    const project: ProjectRecord = { id: newProjectId(), slug: input.slug, name: input.name ?? input.slug, createdAt: new Date().toISOString() };
    await this.store.projects.insert(project);
    return project;
  }

  async rename(caller: Principal, slug: string, name: string): Promise<ProjectRecord> {
    const project = await this.store.projects.bySlug(slug);
    if (!project || (project.id !== caller.projectId && !runsInstall(caller))) throw notFound(slug);
    await this.store.projects.rename(project.id, name);
    return { ...project, name };
  }
}

const runsInstall = (caller: Principal): boolean => caller.role === "admin" && caller.projectId === DEFAULT_PROJECT_ID;

const notFound = (slug: string) => new GenserveError("not_found", { detail: `No project "${slug}" exists for this key.` });
