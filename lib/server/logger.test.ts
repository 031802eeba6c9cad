import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, scrubSecrets } from "./logger";

const capture = (secrets: string[] = []) => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(chunk.toString()), done()) });
  return { log: createLogger("info", sink, { secrets }), lines };
};

describe("log scrubbing", () => {
  it("removes configured secrets and credential-shaped strings from every field and the message", async () => {
    const { log, lines } = capture(["corp-provider-token-123"]);
    log.warn(
      { provider: { status: 401, body: 'Incorrect API key provided: sk-proj-abcdefghijkl1234. Token corp-provider-token-123 rejected', nested: [{ auth: "Bearer eyJhbGciOi.payload.sig" }] } },
      "model call failed for gs_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    );
    await new Promise((r) => setImmediate(r));
    const line = lines.join("");
    expect(line).not.toMatch(/sk-proj-abcdefghijkl1234|corp-provider-token-123|eyJhbGciOi|gs_AAAA/);
    expect(JSON.parse(line)).toMatchObject({ provider: { status: 401, body: "Incorrect API key provided: [redacted]. Token [redacted] rejected", nested: [{ auth: "Bearer [redacted]" }] }, msg: "model call failed for [redacted]" });
  });

  it("keeps ordinary text as it is", () => {
    expect(scrubSecrets("run_01ABC finished in 12 ms; task-list ok", ["short"])).toBe("run_01ABC finished in 12 ms; task-list ok");
  });
});

describe("log redaction of people's secrets", () => {
  it("never writes a session cookie, CSRF token, password, sign-in link or client secret", async () => {
    const { log, lines } = capture(["oidc-client-secret-value"]);
    const token = "Abcdefghijklmnopqrstuvwxyz0123456789_-ABCDE";
    log.info({ cookie: `genserve_session=${token}`, password: "hunter2 but longer", csrfToken: "csrf-value-123456", request: { token: "tok-123456", clientSecret: "oidc-client-secret-value" } }, "signed in");
    log.warn({ detail: `replayed genserve_session=${token}; link https://x.example/auth/link/${token}; invite https://x.example/auth/invite/${token}` }, "odd request");
    await new Promise((r) => setImmediate(r));
    const text = lines.join("");
    for (const secret of [token, "hunter2", "csrf-value-123456", "tok-123456", "oidc-client-secret-value"]) expect(text).not.toContain(secret);
    expect(text).toContain("genserve_session=[redacted]");
    expect(text).toContain("/auth/link/[redacted]");
    expect(text).toContain("/auth/invite/[redacted]");
  });
});
