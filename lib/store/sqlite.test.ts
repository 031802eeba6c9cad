import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { storeContract } from "./contract";
import { openSqliteStore } from "./sqlite";

// The storage contract on a real SQLite file; the second handle is another connection to the same
// file, as a CLI command next to the server would have.
let dir = "";
storeContract("SQLite", {
  first: async () => openSqliteStore((dir = mkdtempSync(path.join(os.tmpdir(), "genserve-store-")))),
  second: async () => openSqliteStore(dir),
  another: async () => openSqliteStore(mkdtempSync(path.join(os.tmpdir(), "genserve-store-"))),
});
