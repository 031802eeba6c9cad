import { modelListSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";
import { getRuntime } from "@/lib/server/runtime";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Configured models and whether each can run: local models say loading, ready, or what is wrong and how to fix it. */
export const GET = route(async ({ principal }) => {
  await principal();
  return reply(modelListSchema, { models: getRuntime().models.statuses() });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
