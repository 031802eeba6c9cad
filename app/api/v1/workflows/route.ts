import { json } from "@/lib/http/problem";
import { route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = route(async ({ runtime, principal }) => {
  await principal();
  const workflows = Object.values(runtime.config.workflows).map((w) => ({
    slug: w.slug,
    description: w.description,
    model: w.model,
    contexts: w.contexts,
    // Lets clients estimate a run's prompt size before spending it (the text itself stays private).
    instructionsChars: w.instructions.length,
  }));
  return json({ workflows });
});
