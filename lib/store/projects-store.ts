import "server-only";
import { GenserveError } from "../errors";
import type { StoreRunner } from "./runner";
import type { ProjectRecord, Store } from "./store-types";

interface ProjectRow {
  id: string;
  slug: string;
  name: string;
  created_at: string;
}

const toProject = (row: ProjectRow): ProjectRecord => ({ id: row.id, slug: row.slug, name: row.name, createdAt: row.created_at });

/** Projects (workspaces), written once for both backends; their keys, and through them everything else, point at them. */
export function projectsStore(db: StoreRunner): Store["projects"] {
  return {
    async insert(project) {
      // A taken slug is the unique index's to refuse, whoever inserts at the same time.
      const [taken] = await db.all<{ id: string }>("SELECT id FROM projects WHERE slug = $1", [project.slug]);
      if (taken) throw new GenserveError("conflict", { detail: `A project with the slug "${project.slug}" exists; choose another.` });
      await db.run("INSERT INTO projects (id, slug, name, created_at) VALUES ($1, $2, $3, $4)", [project.id, project.slug, project.name, project.createdAt]);
    },
    async get(id) {
      const [row] = await db.all<ProjectRow>("SELECT * FROM projects WHERE id = $1", [id]);
      return row ? toProject(row) : null;
    },
    async bySlug(slug) {
      const [row] = await db.all<ProjectRow>("SELECT * FROM projects WHERE slug = $1", [slug]);
      return row ? toProject(row) : null;
    },
    async list() {
      return (await db.all<ProjectRow>("SELECT * FROM projects ORDER BY created_at, id", [])).map(toProject);
    },
    async rename(id, name) {
      return (await db.run("UPDATE projects SET name = $1 WHERE id = $2", [name, id])) > 0;
    },
  };
}
