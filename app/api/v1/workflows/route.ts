import { workflowListSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = route(async ({ runtime, principal }) => {
  await principal();
  const workflows = (await runtime.catalog.workflows()).map((w) => ({
    slug: w.slug,
    description: w.description,
    model: w.model,
    contexts: w.contexts,
    // Lets clients estimate a run's prompt size before spending it.
    instructionsChars: w.instructions.length,
    ...(w.example && { example: w.example }),
    version: w.version,
    source: w.source,
  }));
  return reply(workflowListSchema, { workflows });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
