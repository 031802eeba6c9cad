import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { PrettyLines } from "@/lib/json/pretty-lines";
import { LiveFieldsView } from "./live-fields-view";

const SCHEMA = {
  type: "object",
  required: ["items", "note"],
  properties: { items: { type: "array", items: { type: "object", required: ["id", "title"], properties: { id: { type: "integer" }, title: { type: "string" } } } }, note: { type: "string" } },
};

/** The rows' text as drawn (a short document: every row is drawn), one per line. */
function rows(text: string, closed: string[], ended: "done" | "stopped" | null): string[] {
  const doc = new PrettyLines();
  doc.push(text);
  const html = renderToStaticMarkup(<LiveFieldsView doc={doc} version={doc.version} schema={SCHEMA} closed={new Set(closed)} ended={ended} />);
  return html
    .split(/<div style="height:20px"[^>]*>/)
    .slice(1)
    .map((row) => row.replace(/<[^>]+>/g, "").replace(/&quot;/g, '"'));
}

describe("LiveFieldsView's required fields not written yet", () => {
  it("names them under an open object, and stops naming the ones that arrive", () => {
    const open = rows('{"items":[{"id":1', [], null);
    expect(open[0]).toContain("note: required, not written yet");
    expect(open[0]).not.toContain("items:");
    expect(open[2]).toContain("title: required, not written yet");
    const later = rows('{"items":[{"id":1,"title":"a"}],"note":"n"', ["/items/0/id", "/items/0/title", "/items/0", "/items"], null);
    expect(later[0]).not.toContain("required");
    expect(later[2]).not.toContain("required");
    expect(later[2]).toContain("done");
  });

  it("says a stopped stream's missing fields were never written", () => {
    expect(rows('{"items":[', [], "stopped")[0]).toContain("note: required, never written");
  });
});
