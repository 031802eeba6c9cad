// Lets Node run genserve's TypeScript directly (see lib/workers/typescript.mjs).
import "../lib/workers/typescript.mjs";
