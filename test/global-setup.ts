import path from "node:path";
import { buildApp, buildIsCurrent } from "../lib/cli/build";

/** The HTTP suites talk to the real built server; build it once if the sources changed. */
export default async function setup(): Promise<void> {
  const root = path.resolve(import.meta.dirname, "..");
  if (!buildIsCurrent(root)) await buildApp(root);
}
