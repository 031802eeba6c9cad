import { describe, expect, it } from "vitest";
import { genserveProxy } from "./proxy";

describe("genserveProxy", () => {
  const calls: { url: string; init: RequestInit }[] = [];
  const upstream = async (url: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ url: String(url), init: init! });
    return new Response("id: 1\nevent: done\ndata: {}\n\n", { headers: { "content-type": "text/event-stream", "x-run-id": "run_1", "set-cookie": "secret=1" } });
  };
  const { GET, POST } = genserveProxy({ baseURL: "http://genserve.internal:3000/", apiKey: "gs_server_key", fetch: upstream });

  it("forwards the run operations with the server's key and passes the answer through", async () => {
    const response = await POST(new Request("https://app.example.com/api/genserve/api/v1/stream/object?cancelOnDisconnect=true", { method: "POST", body: '{"input":"x"}', headers: { accept: "text/event-stream", "content-type": "application/json", "api-key": "from-browser", cookie: "session=1" } }));
    expect(calls[0]!.url).toBe("http://genserve.internal:3000/api/v1/stream/object?cancelOnDisconnect=true");
    expect(calls[0]!.init.headers).toEqual({ "Api-Key": "gs_server_key", accept: "text/event-stream", "content-type": "application/json" });
    expect(calls[0]!.init.body).toBe('{"input":"x"}');
    expect(response.headers.get("x-run-id")).toBe("run_1");
    expect(response.headers.get("set-cookie")).toBeNull();
    expect(await response.text()).toContain("event: done");
    await GET(new Request("https://app.example.com/api/genserve/api/v1/runs/run_01ABC/stream", { headers: { "last-event-id": "4" } }));
    expect(calls[1]!.url).toBe("http://genserve.internal:3000/api/v1/runs/run_01ABC/stream");
    expect(calls[1]!.init.headers).toMatchObject({ "last-event-id": "4" });
  });

  it("forwards nothing else (keys, workflows, admin operations)", async () => {
    const before = calls.length;
    for (const path of ["/api/genserve/api/v1/keys", "/api/genserve/api/v1/workflows/x", "/api/genserve/api/v1/runs/../keys", "/api/genserve/other"]) {
      expect((await GET(new Request(`https://app.example.com${path}`))).status).toBe(404);
    }
    expect(calls.length).toBe(before);
  });
});
