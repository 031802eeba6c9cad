import { getRuntime } from "@/lib/server/runtime";
import { otherMethods } from "@/lib/http/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * Readiness: configuration loaded, storage answering, and no schema worker stuck past its time
 * limit (a worker that cannot be stopped would hold up every object run).
 */
export async function GET(): Promise<Response> {
  const headers = { "Cache-Control": "no-store" };
  try {
    const rt = getRuntime();
    await rt.store.ping();
    const schemaWorkers = rt.schemas.status();
    const body = { storage: rt.store.kind, workflows: (await rt.catalog.workflows()).length, version: rt.version, schemaWorkers };
    if (schemaWorkers.stuck > 0) {
      return Response.json({ status: "not ready", reason: `${schemaWorkers.stuck} schema worker(s) stuck past their time limit`, ...body }, { status: 503, headers });
    }
    return Response.json({ status: "ready", ...body }, { headers });
  } catch (error) {
    return Response.json({ status: "not ready", reason: (error as Error).message.split("\n")[0] }, { status: 503, headers });
  }
}

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
