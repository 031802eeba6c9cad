import { createThreadRequest } from "@/lib/api/requests";
import { GenserveError } from "@/lib/errors";
import { threadSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";
import { newThreadId } from "@/lib/ids";
import { assertWorkflowAllowed } from "@/lib/keys/access";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = route(async ({ runtime, principal, body }) => {
  const caller = await principal();
  const input = await body(createThreadRequest);
  assertWorkflowAllowed(caller, input.workflowSlug, "/workflowSlug");
  // A thread keeps the reference as given: `slug@staging` follows the label from turn to turn.
  await runtime.catalog.resolve(input.workflowSlug);
  const now = new Date().toISOString();
  const thread = { id: input.id ?? newThreadId(), keyId: caller.keyId, workflowSlug: input.workflowSlug, createdAt: now, updatedAt: now };
  if (!(await runtime.store.threads.create(thread, runtime.config.limits.threadsPerKey))) {
    throw new GenserveError("conflict", { detail: `This key already has a thread "${thread.id}".`, errors: [{ path: "/id", message: "already exists" }] });
  }
  return reply(threadSchema, { id: thread.id, workflowSlug: thread.workflowSlug, createdAt: now, updatedAt: now, messageCount: 0, bytes: 0, messages: [], nextCursor: null }, { status: 201, headers: { Location: `/api/v1/threads/${encodeURIComponent(thread.id)}` } });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
