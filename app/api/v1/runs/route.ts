import { runListQuery } from "@/lib/api/requests";
import { validationError, zodFieldErrors } from "@/lib/errors";
import { runPageSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";
import { runListBounds, runListView } from "@/lib/http/run-view";
import { runIdAt } from "@/lib/ids";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = route(async ({ request, runtime, principal }) => {
  const caller = await principal();
  const parsed = runListQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams), { reportInput: true });
  if (!parsed.success) throw validationError(zodFieldErrors(parsed.error).map((e) => ({ ...e, path: `?${e.path.slice(1)}` })));
  const { limit, cursor, status, operation, workflowSlug, evaluationId, q, from, to } = parsed.data;
  let beforeId: string | undefined;
  if (cursor !== undefined) {
    beforeId = Buffer.from(cursor, "base64url").toString("utf8");
    if (!/^run_[0-9A-Z]{26}$/.test(beforeId)) throw validationError([{ path: "?cursor", message: "is not a cursor this API returned" }]);
  }
  // Run ids sort by creation time: a time range is a range of ids, served by the primary key.
  if (to !== undefined) {
    const toId = runIdAt(Date.parse(to));
    if (beforeId === undefined || toId < beforeId) beforeId = toId;
  }
  const fromId = from === undefined ? undefined : runIdAt(Date.parse(from));
  const filter = { keyId: caller.admin ? undefined : caller.keyId, status, operation, workflowSlug, evaluationId, beforeId, fromId, search: q, limit: limit + 1 };
  const { runs, scannedTo } = await runtime.store.runs.list(filter, runListBounds(runtime.config.limits));
  const page = runs.slice(0, limit);
  // A full page continues after its last run; a search stopped at its bound, after the last run it looked at.
  const next = runs.length > limit ? page[page.length - 1]!.id : scannedTo;
  return reply(runPageSchema, { runs: page.map(runListView), nextCursor: next === null ? null : Buffer.from(next).toString("base64url") });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
