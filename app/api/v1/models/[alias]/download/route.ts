import { modelStatusSchema } from "@/lib/api/responses";
import { GenserveError } from "@/lib/errors";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";
import { getRuntime } from "@/lib/server/runtime";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** POST /api/v1/models/{alias}/download (admin keys): fetch an unavailable local model's file again, one download at a time. */
export const POST = route<{ alias: string }>(async ({ principal, params }) => {
  const caller = await principal();
  if (!caller.admin) throw new GenserveError("forbidden", { detail: "Only admin keys may retry a model's download." });
  return reply(modelStatusSchema, getRuntime().models.retryDownload(params.alias), { status: 202 });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
