import { describe, expect, it } from "vitest";
import { webhookSignature } from "../delivery/worker";
import { GenserveSignatureError } from "./api-error";
import { verifyCallback } from "./verify-callback";

// The server's own signer (Node's HMAC) against the client's Web Crypto check.
const secret = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
const at = new Date("2026-11-26T10:00:00Z");
const body = JSON.stringify({ id: "evt_1", type: "run.succeeded", createdAt: at.toISOString(), data: { runId: "run_1" } });
const headers = (signature = webhookSignature(secret, "evt_1", at, body)) => ({ "webhook-id": "evt_1", "webhook-timestamp": String(at.getTime() / 1000), "webhook-signature": signature });

describe("verifyCallback", () => {
  it("accepts what the delivery worker signs, from a plain record or a Headers object, as text or bytes", async () => {
    expect((await verifyCallback(body, headers(), secret, { now: at })).data.runId).toBe("run_1");
    expect((await verifyCallback(new TextEncoder().encode(body), new Headers(headers()), secret, { now: at })).type).toBe("run.succeeded");
  });

  it("accepts any of several signatures (a secret being rotated)", async () => {
    const other = `whsec_${Buffer.from("another secret of thirty-two by!").toString("base64")}`;
    const both = `${webhookSignature(other, "evt_1", at, body)} ${webhookSignature(secret, "evt_1", at, body)}`;
    await expect(verifyCallback(body, headers(both), secret, { now: at })).resolves.toMatchObject({ id: "evt_1" });
  });

  it("refuses a changed body, another secret, an old timestamp and missing headers", async () => {
    await expect(verifyCallback(body.replace("run_1", "run_2"), headers(), secret, { now: at })).rejects.toBeInstanceOf(GenserveSignatureError);
    await expect(verifyCallback(body, headers(), `whsec_${Buffer.from("x".repeat(32)).toString("base64")}`, { now: at })).rejects.toThrow(/No signature matches/);
    await expect(verifyCallback(body, headers(), secret, { now: new Date(at.getTime() + 301_000) })).rejects.toThrow(/too far/);
    await expect(verifyCallback(body, { "webhook-id": "evt_1" }, secret, { now: at })).rejects.toThrow(/required/);
  });
});
