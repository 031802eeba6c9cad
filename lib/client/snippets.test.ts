import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { emptyComposition } from "./composition";
import { compositionSnippet, toCurl, toFetch } from "./snippets";

const snippet = {
  origin: "http://127.0.0.1:8080",
  path: "/api/v1/generate/object",
  body: { input: "it's \"quoted\"", type: "event", schema: { type: "object" } },
};

describe("request snippets", () => {
  it("builds a curl command whose body survives the shell unchanged", () => {
    const curl = toCurl(snippet);
    expect(curl).toContain('-H "Api-Key: $GENSERVE_API_KEY"');
    // Let a real shell parse the quoted body back.
    const body = curl.split("--data-raw ")[1]!;
    expect(JSON.parse(execFileSync("sh", ["-c", `printf %s ${body}`]).toString())).toEqual(snippet.body);
  });

  it("adds -N and Accept for streams, and the key only when given", () => {
    const curl = toCurl({ ...snippet, path: "/api/v1/stream/object", accept: "text/event-stream", apiKey: "gs_abc" });
    expect(curl.startsWith("curl -N ")).toBe(true);
    expect(curl).toContain("-H 'Api-Key: gs_abc'");
    expect(curl).toContain("-H 'Accept: text/event-stream'");
  });

  it("builds a fetch call that is valid TypeScript/JavaScript", () => {
    const code = toFetch(snippet);
    expect(code).toContain("process.env.GENSERVE_API_KEY");
    // Syntax check: wrap in an async function and compile it.
    expect(() => new Function(`return (async () => { ${code} })`)).not.toThrow();
  });

  it("makes a composition's request a snippet, as far as the composition is complete", () => {
    const c = { ...emptyComposition('{"type": "object"}'), operation: "stream-object" as const, workflowSlug: "w", input: "hi" };
    expect(compositionSnippet(c, "http://h")).toMatchObject({ origin: "http://h", path: "/api/v1/stream/object", accept: "text/event-stream", body: { input: "hi", workflowSlug: "w", schema: { type: "object" } } });
    // A schema that is not JSON yet: the rest of the request is still copied.
    const unfinished = compositionSnippet({ ...c, operation: "generate-text", schemaText: "{" }, "http://h");
    expect(unfinished).toMatchObject({ path: "/api/v1/generate/text", accept: undefined });
    const broken = compositionSnippet({ ...c, operation: "generate-object", schemaText: "{" }, "http://h");
    expect(broken.body).toEqual({});
  });
});
