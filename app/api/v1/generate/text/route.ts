import { generateTextRequest } from "@/lib/api/requests";
import { json } from "@/lib/http/problem";
import { route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = route(async ({ runtime, runCaller, body }) => {
  const caller = await runCaller();
  const request = await body(generateTextRequest);
  const result = await runtime.runs.generateText(caller, request);
  return json({ text: result.text, metadata: result.metadata }, { headers: { "X-Run-ID": result.runId } });
});
