import { json } from "@/lib/http/problem";
import { route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const GET = route(async ({ runtime, principal }) => {
  await principal();
  const contexts = Object.values(runtime.config.contexts).map((c) => ({ slug: c.slug, title: c.title, size: c.content.length }));
  return json({ contexts });
});
