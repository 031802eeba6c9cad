import { GenserveError } from "@/lib/errors";
import { threadSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const notFound = (id: string) => new GenserveError("thread_not_found", { detail: `No thread "${id}" exists for this key.` });

export const GET = route<{ id: string }>(async ({ runtime, principal, params }) => {
  const caller = await principal();
  const thread = await runtime.store.threads.get(caller.keyId, params.id);
  if (!thread) throw notFound(params.id);
  const messages = await runtime.store.threads.messages(caller.keyId, params.id);
  return reply(threadSchema, { id: thread.id, workflowSlug: thread.workflowSlug, createdAt: thread.createdAt, updatedAt: thread.updatedAt, messages });
});

export const DELETE = route<{ id: string }>(async ({ runtime, principal, params }) => {
  const caller = await principal();
  if (!(await runtime.store.threads.delete(caller.keyId, params.id))) throw notFound(params.id);
  return new Response(null, { status: 204 });
});

export const { POST, PUT, PATCH } = otherMethods("GET", "DELETE");
