import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { RunMetadata } from "@/lib/domain/run-vocabulary";
import { RunStatusChip } from "./run-status";
import { idleRun, type RunState } from "./use-run";

const base: RunState = { ...idleRun(), workflowSlug: "w", operation: "stream-object", startedAt: 1_000, finishedAt: 1_279 };
const text = (run: RunState) => renderToStaticMarkup(<RunStatusChip run={run} />).replace(/<[^>]+>/g, "");

describe("the run's status chip (issue 32, 4.7)", () => {
  it("a stream that failed before its first item does not say it is still waiting for one", () => {
    expect(text({ ...base, status: "error" })).toBe("Failed after 279 ms · nothing had arrived");
    expect(text({ ...base, status: "cancelled" })).toBe("Cancelled at 279 ms · nothing had arrived");
  });

  it("a finished run shows the duration the run recorded, as the Duration row does", () => {
    const metadata = { durationInMs: 41, outputTokens: 7 } as RunMetadata;
    expect(text({ ...base, operation: "generate-object", status: "done", finishedAt: 1_100, metadata })).toBe("Done 41 ms · 7 tok");
  });

  it("a finished stream's first item, counted by the browser, is never shown later than Done", () => {
    const metadata = { durationInMs: 642, outputTokens: 9 } as RunMetadata;
    const done = { ...base, status: "done" as const, firstItemAt: 1_300, finishedAt: 1_950, metadata };
    expect(text(done)).toBe("Done 642 ms · first item 300 ms · 9 tok");
    // The browser saw the first item 877 ms after sending the request; the run itself took 642 ms:
    // the browser's count cannot be placed before the end, so it is left out.
    expect(text({ ...done, firstItemAt: 1_877 })).toBe("Done 642 ms · 9 tok");
    // While it runs, one clock too: the browser's, for both (the time so far is read from the clock
    // now, so the run started a known while ago).
    const t0 = performance.now() - 5_000;
    const running = { ...done, status: "running" as const, startedAt: t0, firstItemAt: t0 + 877, finishedAt: null, metadata: null, streamedChars: 0 };
    expect(text(running)).toMatch(/^Streaming \d+(\.\d+)? s · first item 877 ms/);
  });
});
