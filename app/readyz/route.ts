import { getRuntime } from "@/lib/server/runtime";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Readiness: configuration loaded and storage answering. */
export async function GET(): Promise<Response> {
  const headers = { "Cache-Control": "no-store" };
  try {
    const rt = getRuntime();
    await rt.store.ping();
    return Response.json(
      { status: "ready", storage: rt.store.kind, workflows: (await rt.catalog.workflows()).length, version: rt.version },
      { headers },
    );
  } catch (error) {
    return Response.json({ status: "not ready", reason: (error as Error).message.split("\n")[0] }, { status: 503, headers });
  }
}
