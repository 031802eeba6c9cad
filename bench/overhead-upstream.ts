/**
 * The fake OpenAI-compatible upstream of bench:overhead and bench:streams, in a process of its own:
 * node bin/bench.mjs bench/overhead-upstream.ts PORT [DELAY_MS]. Answers every chat completion at
 * once (or after DELAY_MS), keeping no record of requests.
 */
import { startFakeUpstream } from "../test/helpers/fake-upstream";

const [port, delayMs] = process.argv.slice(3).map(Number);
await startFakeUpstream({ port, delayMs: delayMs || undefined, record: false });
process.on("SIGTERM", () => process.exit(0));
