import "server-only";
import { createThreadRequest } from "../../api/requests";
import { threadSchema } from "../../api/responses";
import { newThreadId } from "../../ids";
import { assertWorkflowAllowed } from "../../keys/owner-access";
import { EDITOR, endpoint, VIEWER } from "../endpoint";

const RUN = EDITOR("Only editor and admin keys may start or delete threads; viewer keys read them.");
import { reply } from "../problem";
import { threadPage } from "../thread-page";

export const endpoints = [
  endpoint({
    method: "POST",
    path: "/api/v1/threads",
    operationId: "createThread",
    summary: "Create a conversation thread (owned by this key)",
    auth: RUN,
    request: { body: createThreadRequest, required: true },
    responses: { "201": { description: "The thread.", body: threadSchema } },
    errors: ["validation_failed", "unauthorized", "workflow_not_found", "conflict", "quota_exceeded", "storage_full"],
    handler: async ({ runtime, principal, body }) => {
      const caller = await principal();
      const input = await body(createThreadRequest);
      assertWorkflowAllowed(caller, input.workflowSlug, "/workflowSlug");
      // A thread keeps the reference as given: `slug@staging` follows the label from turn to turn.
      await runtime.catalog.forProject(caller.projectId).resolve(input.workflowSlug);
      const now = new Date().toISOString();
      const thread = { id: input.id ?? newThreadId(), keyId: caller.keyId, workflowSlug: input.workflowSlug, createdAt: now, updatedAt: now };
      await runtime.services.threads.create(thread);
      return reply(threadSchema, { id: thread.id, workflowSlug: thread.workflowSlug, createdAt: now, updatedAt: now, messageCount: 0, bytes: 0, messages: [], nextCursor: null }, { status: 201, headers: { Location: `/api/v1/threads/${encodeURIComponent(thread.id)}` } });
    },
  }),
  endpoint({
    method: "GET",
    path: "/api/v1/threads/{id}",
    operationId: "getThread",
    summary: "A thread with a page of its messages",
    auth: VIEWER,
    parameters: [
      { name: "order", in: "query", schema: { enum: ["asc", "desc"], default: "asc" }, description: "Oldest first (asc) or newest first (desc)." },
      { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 200, default: 100 } },
      { name: "cursor", in: "query", schema: { type: "string" }, description: "`nextCursor` of the previous page (same `order`)." },
    ],
    responses: { "200": { description: "The thread, its size, and a page of its messages within `limit` and `limits.threadPageBytes` (1 MiB) of content.", body: threadSchema } },
    errors: ["validation_failed", "unauthorized", "thread_not_found"],
    /** A thread with one page of its messages (`?order=asc|desc&limit=&cursor=`), never more than `limits.threadPageBytes` of them. */
    handler: async ({ request, runtime, principal, params }) => {
      const caller = await principal();
      const thread = await runtime.services.threads.get(caller.keyId, params.id);
      const page = await threadPage(runtime.services.threads, thread, new URL(request.url).searchParams, runtime.config.limits.threadPageBytes);
      return reply(threadSchema, { id: thread.id, workflowSlug: thread.workflowSlug, createdAt: thread.createdAt, updatedAt: thread.updatedAt, messageCount: thread.messageCount, bytes: thread.bytes, ...page });
    },
  }),
  endpoint({
    method: "DELETE",
    path: "/api/v1/threads/{id}",
    operationId: "deleteThread",
    summary: "Delete a thread and its messages",
    auth: RUN,
    responses: { "204": { description: "Deleted." } },
    errors: ["unauthorized", "thread_not_found"],
    handler: async ({ runtime, principal, params }) => {
      const caller = await principal();
      await runtime.services.threads.delete(caller.keyId, params.id);
      return new Response(null, { status: 204 });
    },
  }),
];
