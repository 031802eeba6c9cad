import { contextListSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = route(async ({ runtime, principal }) => {
  await principal();
  const contexts = (await runtime.catalog.contexts()).map((c) => ({ slug: c.slug, title: c.title, size: c.content.length, version: c.version, source: c.source }));
  return reply(contextListSchema, { contexts });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
