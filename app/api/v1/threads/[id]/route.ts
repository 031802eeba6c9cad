import { GenserveError } from "@/lib/errors";
import { threadSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";
import { threadPage } from "@/lib/http/thread-page";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const notFound = (id: string) => new GenserveError("thread_not_found", { detail: `No thread "${id}" exists for this key.` });

/** A thread with one page of its messages (`?order=asc|desc&limit=&cursor=`), never more than `limits.threadPageBytes` of them. */
export const GET = route<{ id: string }>(async ({ request, runtime, principal, params }) => {
  const caller = await principal();
  const thread = await runtime.store.threads.get(caller.keyId, params.id);
  if (!thread) throw notFound(params.id);
  const page = await threadPage(runtime.store, thread, new URL(request.url).searchParams, runtime.config.limits.threadPageBytes);
  return reply(threadSchema, { id: thread.id, workflowSlug: thread.workflowSlug, createdAt: thread.createdAt, updatedAt: thread.updatedAt, messageCount: thread.messageCount, bytes: thread.bytes, ...page });
});

export const DELETE = route<{ id: string }>(async ({ runtime, principal, params }) => {
  const caller = await principal();
  if (!(await runtime.store.threads.delete(caller.keyId, params.id))) throw notFound(params.id);
  return new Response(null, { status: 204 });
});

export const { POST, PUT, PATCH } = otherMethods("GET", "DELETE");
