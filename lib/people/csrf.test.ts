import { describe, expect, it } from "vitest";
import { checkCsrf, sameOrigin } from "./csrf";

const request = (headers: Record<string, string>, url = "http://127.0.0.1:8080/api/v1/keys") => new Request(url, { method: "POST", headers });
const PUBLIC = "https://genserve.example.com";

describe("CSRF checks of cookie-authenticated changes", () => {
  it("takes the public URL's origin, the request's own, or Sec-Fetch-Site: same-origin", () => {
    expect(sameOrigin(request({ origin: PUBLIC }), PUBLIC)).toBe(true);
    expect(sameOrigin(request({ origin: "http://127.0.0.1:8080" }), PUBLIC)).toBe(true);
    expect(sameOrigin(request({ "sec-fetch-site": "same-origin" }), PUBLIC)).toBe(true);
  });
  it("trusts the browser's Sec-Fetch-Site over an Origin that differs only by the proxy's scheme (https proxy, no publicUrl)", () => {
    const behindProxy = request({ origin: "https://genserve.internal", "sec-fetch-site": "same-origin" }, "http://genserve.internal/auth/password");
    expect(sameOrigin(behindProxy, "http://genserve.internal")).toBe(true);
    expect(sameOrigin(request({ origin: "https://genserve.internal" }, "http://genserve.internal/auth/password"), "http://genserve.internal")).toBe(false);
    // A browser that says the request is cross-site is refused, whatever the Origin.
    expect(sameOrigin(request({ origin: PUBLIC, "sec-fetch-site": "cross-site" }), PUBLIC)).toBe(false);
  });
  it("refuses another origin, an opaque one, a cross-site fetch, and a request saying nothing", () => {
    expect(sameOrigin(request({ origin: "https://evil.example" }), PUBLIC)).toBe(false);
    expect(sameOrigin(request({ origin: "https://genserve.example.com.evil.example" }), PUBLIC)).toBe(false);
    expect(sameOrigin(request({ origin: "null", "sec-fetch-site": "cross-site" }), PUBLIC)).toBe(false);
    expect(sameOrigin(request({ "sec-fetch-site": "same-site" }), PUBLIC)).toBe(false);
    expect(sameOrigin(request({}), PUBLIC)).toBe(false);
  });
  it("needs the session's token as well, compared whole", () => {
    expect(() => checkCsrf(request({ origin: PUBLIC, "x-csrf-token": "tok-1" }), PUBLIC, "tok-1")).not.toThrow();
    for (const sent of [undefined, "", "tok-", "tok-12"]) {
      expect(() => checkCsrf(request({ origin: PUBLIC, ...(sent === undefined ? {} : { "x-csrf-token": sent }) }), PUBLIC, "tok-1")).toThrow(expect.objectContaining({ code: "csrf_refused", status: 403 }));
    }
    expect(() => checkCsrf(request({ origin: "https://evil.example", "x-csrf-token": "tok-1" }), PUBLIC, "tok-1")).toThrow(expect.objectContaining({ code: "csrf_refused" }));
  });
});
