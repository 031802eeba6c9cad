/**
 * Projects and roles as the API shows them: the projects API (admin keys), and the role and
 * project a key holds (in keys' listings and /me). Browser-safe.
 */
import { z } from "zod";
import { named } from "./shape-registry";
import { SLUG } from "../domain/names";
import { ROLES } from "../domain/roles";

export const roleSchema = z.enum(ROLES).describe("What the key may do in its project: viewer reads; editor also runs and edits; admin also manages keys, the production label and budgets.");

export const projectSchema = z
  .strictObject({ id: z.string(), slug: z.string(), name: z.string(), createdAt: z.string() })
  .apply(named({ id: "Project", description: "A project (workspace): its keys see its runs, threads, suites, evaluations, shares, inboxes and usage, and nothing of other projects." }));

export const projectListSchema = z.strictObject({ projects: z.array(projectSchema) }).apply(named({ id: "ProjectList" }));

const projectName = z.string().trim().min(1, "must be 1-200 characters").max(200, "must be 1-200 characters");

export const createProjectRequest = z
  .object({
    slug: z.string().regex(SLUG, "must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"),
    name: projectName.optional(),
  })
  .strict()
  .apply(named({ id: "CreateProjectRequest" }));

export const renameProjectRequest = z.object({ name: projectName }).strict().apply(named({ id: "RenameProjectRequest" }));
