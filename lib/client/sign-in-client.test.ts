import { afterEach, describe, expect, it, vi } from "vitest";
import { endSession } from "./sign-in-client";

type Answer = { status: number; body: unknown };
const problem = (status: number, code: string): Answer => ({ status, body: { code, detail: code } });

/** A fetch answering each call in turn with `answers`, recording what was asked. */
function fakeFetch(answers: Answer[]) {
  const calls: { url: string; method: string; csrf: string | undefined }[] = [];
  vi.stubGlobal("fetch", async (url: string, init: RequestInit = {}) => {
    calls.push({ url, method: init.method ?? "GET", csrf: (init.headers as Record<string, string> | undefined)?.["X-CSRF-Token"] });
    const answer = answers.shift();
    if (!answer) throw new Error(`unexpected request ${url}`);
    return new Response(JSON.stringify(answer.body), { status: answer.status, headers: { "content-type": "application/json" } });
  });
  return calls;
}

afterEach(() => vi.unstubAllGlobals());

describe("endSession", () => {
  it("ends the session with the token held", async () => {
    const calls = fakeFetch([{ status: 200, body: { ended: 1 } }]);
    await endSession("tok-1", true);
    expect(calls).toEqual([{ url: "/auth/logout?everywhere=1", method: "POST", csrf: "tok-1" }]);
  });
  it("reads a fresh CSRF token and tries once more when the server refused the one held", async () => {
    const calls = fakeFetch([problem(403, "csrf_refused"), { status: 200, body: { csrfToken: "tok-2" } }, { status: 200, body: { ended: 1 } }]);
    await endSession("stale");
    expect(calls.map((c) => `${c.method} ${c.url} ${c.csrf ?? ""}`.trim())).toEqual(["POST /auth/logout stale", "GET /api/v1/session", "POST /auth/logout tok-2"]);
  });
  it("is done when no session is left, and fails with the server's error otherwise (only one retry)", async () => {
    fakeFetch([problem(403, "csrf_refused"), problem(401, "unauthorized")]);
    await expect(endSession("stale")).resolves.toBeUndefined();
    fakeFetch([problem(503, "service_unavailable")]);
    await expect(endSession("tok")).rejects.toMatchObject({ status: 503, code: "service_unavailable" });
    fakeFetch([problem(403, "csrf_refused"), { status: 200, body: { csrfToken: "tok-2" } }, problem(403, "csrf_refused")]);
    await expect(endSession("stale")).rejects.toMatchObject({ code: "csrf_refused" });
  });
});
