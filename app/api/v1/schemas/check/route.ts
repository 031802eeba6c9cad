import { checkSchemaRequest } from "@/lib/api/requests";
import { schemaCheckSchema } from "@/lib/api/responses";
import { reply } from "@/lib/http/problem";
import { otherMethods, route } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** What an object run would make of a schema, for a workflow's model, without running anything (the playground's lint). */
export const POST = route(async ({ runtime, principal, body }) => {
  const caller = await principal();
  // The schema's problems are the answer here, not a refusal.
  const input = await body(checkSchemaRequest, { callerSchema: "as data" });
  return reply(schemaCheckSchema, await runtime.runs.checkSchema(caller, input));
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
