// Worker thread that checkpoints the SQLite store's write-ahead log (see `checkpointInThread` in
// sqlite.ts). A checkpoint copies the WAL's pages back into the database file and syncs it: several
// milliseconds of blocking work, which SQLite otherwise does inside whichever commit crosses its
// threshold, on the event loop, in the middle of a request. Here it runs beside the event loop, on
// its own connection, as a PASSIVE checkpoint: it never waits for, nor holds up, the server's
// readers and writers. It looks as often as it takes to find about `frames` new frames each time
// (between every `minMs` and every `maxMs`). Plain JavaScript so that Node loads it as it is.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const { file, minMs, maxMs, frames } = workerData;
const db = new Database(file, { fileMustExist: true });
db.pragma("busy_timeout = 1000");
// This connection never commits, so it never checkpoints on its own account either.
db.pragma("wal_autocheckpoint = 0");

let timer;
let waitMs = minMs;
let last = { log: 0, checkpointed: 0 };
const checkpoint = () => {
  try {
    const [now] = db.pragma("wal_checkpoint(PASSIVE)");
    // Frames this checkpoint copied: all it did if the WAL started over since the last one.
    const restarted = now.log < last.log || now.checkpointed < last.checkpointed;
    const copied = restarted ? now.checkpointed : now.checkpointed - last.checkpointed;
    last = now;
    // Aim at about `frames` frames a checkpoint, as SQLite's own threshold does: the WAL then
    // starts over (which costs the next commit a sync of the WAL's header) no more often than
    // without the worker, and no checkpoint grows large.
    waitMs = Math.min(maxMs, Math.max(minMs, copied > 0 ? (waitMs * frames) / copied : waitMs * 2));
  } catch {
    // The file busy past the time-out: tried again on the next turn.
  }
  timer = setTimeout(checkpoint, waitMs);
};
timer = setTimeout(checkpoint, minMs);

parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
