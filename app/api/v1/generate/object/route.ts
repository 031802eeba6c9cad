import { generateObjectRequest } from "@/lib/api/requests";
import { json } from "@/lib/http/problem";
import { route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = route(async ({ runtime, runCaller, body }) => {
  const caller = await runCaller();
  const request = await body(generateObjectRequest);
  const result = await runtime.runs.generateObject(caller, request);
  return json({ object: result.object, metadata: result.metadata }, { headers: { "X-Run-ID": result.runId } });
});
