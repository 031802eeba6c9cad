import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { createClient } from "./client";
import { useObjectStream } from "./react";

// The hook's state (ObjectStreamState) is tested against a live genserve in
// test/http/sdk-client.test.ts; here, that the hook runs inside React.
describe("useObjectStream", () => {
  it("renders in React with an idle state (server rendering; no DOM library is installed for updates)", () => {
    const client = createClient({ baseURL: "http://127.0.0.1:1" });
    let seen: unknown;
    function Probe() {
      const state = useObjectStream({ client, workflow: "extract-invoice" });
      seen = state;
      return createElement("p", null, state.isLoading ? "loading" : "idle");
    }
    expect(renderToString(createElement(Probe))).toBe("<p>idle</p>");
    expect(seen).toMatchObject({ object: undefined, isLoading: false, error: undefined, submit: expect.any(Function), stop: expect.any(Function) });
  });
});
