"use client";

import { loader } from "@monaco-editor/react";
import draft07 from "ajv/dist/refs/json-schema-draft-07.json";
import type { SlimMonaco } from "./monaco-slim";

export type Monaco = SlimMonaco;

let loading: Promise<Monaco> | null = null;

/**
 * Loads Monaco from the installed package (never a CDN: the app works offline) with its editor and
 * JSON workers built from local files, and tells @monaco-editor/react to use it. Only the editor
 * API, the JSON language and the diff editor are loaded (monaco-slim.ts), in a chunk of their own
 * that the editors ask for once they have mounted, after the page's first paint. The editor must
 * not mount before this resolves, or the loader would fetch Monaco from a CDN.
 */
export function loadMonaco(): Promise<Monaco> {
  loading ??= (async () => {
    (self as unknown as { MonacoEnvironment: unknown }).MonacoEnvironment = {
      getWorker(_id: string, label: string) {
        if (label === "json") return new Worker(new URL("./json.worker.ts", import.meta.url), { type: "module" });
        return new Worker(new URL("./editor.worker.ts", import.meta.url), { type: "module" });
      },
    };
    const { monaco } = await import("./monaco-slim");
    // Schema documents are validated against the JSON Schema meta-schema: squiggles, hover docs and
    // keyword completion, with no schema fetched from the network.
    monaco.json.jsonDefaults.setDiagnosticsOptions({
      validate: true,
      enableSchemaRequest: false,
      schemas: [
        { uri: "http://json-schema.org/draft-07/schema", fileMatch: ["schema.json"], schema: draft07 as never },
        // A schema naming a later draft in `$schema` ("Schema from example" writes 2020-12) would
        // otherwise be flagged as unloadable (no schema is fetched): draft-07's meta-schema stands in,
        // for completion and hovers; it refuses none of the later drafts' keywords.
        { uri: "https://json-schema.org/draft/2020-12/schema", schema: draft07 as never },
        { uri: "https://json-schema.org/draft/2019-09/schema", schema: draft07 as never },
      ],
    });
    loader.config({ monaco: monaco as never });
    return monaco;
  })();
  return loading;
}
