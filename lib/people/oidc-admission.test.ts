import { describe, expect, it } from "vitest";
import { mayCreatePerson } from "./oidc-admission";

const none = { allowedDomains: [] as string[], defaultRole: undefined };
const acme = { allowedDomains: ["Acme.example"], defaultRole: undefined };

describe("mayCreatePerson", () => {
  it("creates nobody the provider accepts unless told to", () => {
    expect(mayCreatePerson(none, { email: "x@gmail.com", email_verified: true }, false)).toBe(false);
    expect(mayCreatePerson(none, { email: "x@acme.example", email_verified: true }, false)).toBe(false);
  });
  it("creates people whose groups map to a role, or anyone when a default role is set on purpose", () => {
    expect(mayCreatePerson(none, { email: "x@gmail.com" }, true)).toBe(true);
    expect(mayCreatePerson({ allowedDomains: [], defaultRole: "viewer" }, {}, false)).toBe(true);
  });
  it("creates people of an allowed domain only with a verified email, and Google's hd in the list when sent", () => {
    expect(mayCreatePerson(acme, { email: "ana@ACME.example", email_verified: true }, false)).toBe(true);
    expect(mayCreatePerson(acme, { email: "ana@acme.example", email_verified: "true", hd: "acme.example" }, false)).toBe(true);
    expect(mayCreatePerson(acme, { email: "ana@acme.example", email_verified: false }, false)).toBe(false);
    expect(mayCreatePerson(acme, { email: "ana@acme.example" }, false)).toBe(false);
    expect(mayCreatePerson(acme, { email: "ana@acme.example", email_verified: true, hd: "other.example" }, false)).toBe(false);
    expect(mayCreatePerson(acme, { email: "ana@evil.example", email_verified: true }, false)).toBe(false);
    expect(mayCreatePerson(acme, { email: "ana@sub.acme.example", email_verified: true }, false)).toBe(false);
    expect(mayCreatePerson(acme, { email: "acme.example", email_verified: true }, false)).toBe(false);
  });
});
