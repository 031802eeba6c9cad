#!/usr/bin/env node
// Entry point of the `genserve` command (TypeScript, run through tsx).
import "./register.mjs";

await import("../lib/cli/main.ts");
