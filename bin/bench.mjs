#!/usr/bin/env node
// Runs a TypeScript benchmark: node bin/bench.mjs bench/NAME.ts
import "./register.mjs";
import path from "node:path";
import { pathToFileURL } from "node:url";

await import(pathToFileURL(path.resolve(process.argv[2])).href);
