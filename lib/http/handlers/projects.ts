import "server-only";
import { changesBetween } from "../../audit/audit-log";
import { audit } from "../audit-origin";
import { createProjectRequest, projectListSchema, projectSchema, renameProjectRequest } from "../../api/project-shapes";
import { ADMIN, endpoint } from "../endpoint";
import { reply } from "../problem";

/** Projects are admin business: the default project's admins manage all of them, another project's admins only their own. */
const PROJECTS = ADMIN("Only admin keys may manage projects.");

export const endpoints = [
  endpoint({
    method: "GET",
    path: "/api/v1/projects",
    operationId: "listProjects",
    summary: "Projects (admin keys): every project for the default project's admins, otherwise the key's own",
    auth: PROJECTS,
    responses: { "200": { description: "The projects.", body: projectListSchema } },
    errors: ["unauthorized", "forbidden"],
    handler: async ({ runtime, principal }) => reply(projectListSchema, { projects: await runtime.services.projects.list(await principal()) }),
  }),
  endpoint({
    method: "POST",
    path: "/api/v1/projects",
    operationId: "createProject",
    summary: "Create a project (admin keys of the default project); then create its first admin key with POST /api/v1/keys and `project`",
    auth: PROJECTS,
    request: { body: createProjectRequest, required: true },
    responses: { "201": { description: "The project.", body: projectSchema } },
    errors: ["validation_failed", "unauthorized", "forbidden", "conflict", "unsupported_media_type"],
    handler: async (ctx) => {
      const { runtime, principal, body } = ctx;
      const input = await body(createProjectRequest);
      const project = await runtime.services.projects.create(await principal(), input);
      await audit(ctx, "project.create", { kind: "project", id: project.id }, changesBetween(null, { slug: project.slug, name: project.name }));
      return reply(projectSchema, project, { status: 201, headers: { Location: `/api/v1/projects/${project.slug}` } });
    },
  }),
  endpoint({
    method: "PATCH",
    path: "/api/v1/projects/{slug}",
    operationId: "renameProject",
    summary: "Rename a project (admin keys: their own; the default project's admins: any); its slug stays",
    auth: PROJECTS,
    request: { body: renameProjectRequest, required: true },
    responses: { "200": { description: "The project.", body: projectSchema } },
    errors: ["validation_failed", "unauthorized", "forbidden", "not_found", "unsupported_media_type"],
    handler: async (ctx) => {
      const { runtime, principal, params, body } = ctx;
      const { name } = await body(renameProjectRequest);
      const caller = await principal();
      const before = (await runtime.services.projects.list(caller)).find((p) => p.slug === params.slug);
      const project = await runtime.services.projects.rename(caller, params.slug, name);
      await audit(ctx, "project.rename", { kind: "project", id: project.id }, changesBetween({ name: before?.name ?? null }, { name: project.name }));
      return reply(projectSchema, project);
    },
  }),
];
