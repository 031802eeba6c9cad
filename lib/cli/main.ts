import "server-only";
import { Command, Option } from "commander";
import { buildApp, ensureBuild } from "./build";
import { loadConfigOrExit, openStore, PACKAGE_ROOT, VERSION } from "./common";
import { keysCreate, keysList, keysRevoke, keysRotateSecret, keysUpdate } from "./keys-command";
import { projectsCreate, projectsList, projectsRename } from "./projects-command";
import { runsList, runsShow } from "./runs-command";
import { usersCreate, usersDisable, usersLink, usersPassword } from "./users-command";
import { workflowsLabel, workflowsLabels } from "./workflows";
import { evaluate } from "./eval";
import { serve } from "./serve";
import { exportData, importData } from "./transfer-command";
import { typesCommand } from "./types-command";

const env = process.env;
const cwd = process.cwd();

const withStorage = (command: Command) =>
  command
    .addOption(new Option("-c, --config <file>", "configuration file (default: ./genserve.yaml if present)"))
    .addOption(new Option("-d, --data <dir>", "data directory (default: $GENSERVE_DATA_DIR or ./data)"))
    .addOption(new Option("--database-url <url>", "PostgreSQL (postgres://…) instead of SQLite in the data directory (default: $DATABASE_URL or database.url)"));

const program = new Command("genserve")
  .description("Self-hosted generation service: structured objects, streams and text from named workflows.")
  .version(VERSION)
  .showHelpAfterError();

withStorage(program.command("serve").description("run the server (builds the web app first if needed)"))
  .option("-p, --port <port>", "port to listen on (default: $PORT or 8080; 0 picks a free one)")
  .option("-H, --host <host>", "address to listen on (default: $HOST or 127.0.0.1)")
  .option("--log-level <level>", "log level: fatal, error, warn, info, debug (default: $LOG_LEVEL or info)")
  .option("--dev", "development mode: Next.js dev server with hot reload, no build")
  .option("-m, --model <file>", "local model for the `default` workflow: a .gguf file or an hf: URI (default: $GENSERVE_MODEL or the embedded Qwen2.5 0.5B)")
  .action((options) => serve(options, env, cwd));

/** The limit options of `keys create` and `keys update` ("none" removes one). */
const withLimits = (command: Command) =>
  command
    .option("--rpm <n>", "runs per minute (429 beyond; 'none': no limit but limits.runsPerMinute)")
    .option("--tpm <n>", "tokens (input and output) per minute")
    .option("--concurrency <n>", "runs executing at once")
    .option("--workflows <slugs>", "comma-separated workflows the key may run (others: 403); 'none': all")
    .option("--budget-daily <usd>", "spend per UTC day in US dollars (402 beyond)")
    .option("--budget-monthly <usd>", "spend per UTC calendar month in US dollars");

const keys = program.command("keys").description("manage API keys");
withLimits(withStorage(keys.command("create").description("create a key; the key is printed once (last line of output)")))
  .requiredOption("-n, --name <name>", "a name to recognise the key by")
  .option("--role <role>", "viewer (reads), editor (also runs and edits; the default) or admin (also keys, the production label, budgets)")
  .option("--project <slug>", "the project the key belongs to and sees (default: the default project)")
  .option("--admin", "the same as --role admin")
  .option("--json", 'print {"id","name","key","admin","role","projectId","limits","webhookSecret"} as JSON')
  .action((options) => keysCreate(options, env, cwd));
withLimits(withStorage(keys.command("update").description("rename a key or change its limits ('none' removes a limit)").argument("<id>", "key id (key_...)")))
  .option("-n, --name <name>", "a new name")
  .option("--json", "print JSON")
  .action((id: string, options) => keysUpdate(id, options, env, cwd));
withStorage(keys.command("list").description("list keys (never the keys themselves)"))
  .option("--json", "print JSON")
  .action((options) => keysList(options, env, cwd));
withStorage(keys.command("rotate-secret").description("new callback signing secret; the old one signs alongside for 24 h").argument("<id>", "key id (key_...)"))
  .option("--json", "print JSON")
  .action((id: string, options) => keysRotateSecret(id, options, env, cwd));
withStorage(keys.command("revoke").description("revoke a key; it is refused at once").argument("<id>", "key id (key_...)"))
  .action((id: string, options) => keysRevoke(id, options, env, cwd));

const users = program.command("users").description("people with local accounts (sign-in links, passwords)");
withStorage(users.command("create").description("create a person; prints a one-time sign-in link (15 minutes)"))
  .requiredOption("--email <email>", "their email address")
  .addOption(new Option("--role <role>", "their role").choices(["admin", "editor", "viewer"]).makeOptionMandatory())
  .option("--name <name>", "their name")
  .option("--public-url <url>", "the site's address for the link (default: server.publicUrl)")
  .action((options) => usersCreate(options, env, cwd));
withStorage(users.command("link").description("a new one-time sign-in link for a person"))
  .requiredOption("--email <email>", "their email address")
  .option("--public-url <url>", "the site's address for the link (default: server.publicUrl)")
  .action((options) => usersLink(options, env, cwd));
withStorage(users.command("password").description("set a person's password, read from stdin (at least 12 characters)"))
  .requiredOption("--email <email>", "their email address")
  .action((options) => usersPassword(options, env, cwd));
withStorage(users.command("disable").description("remove a person's access: no more sign-ins, every session of theirs ended"))
  .requiredOption("--email <email>", "their email address")
  .action((options) => usersDisable(options, env, cwd));
const projects = program.command("projects").description("projects (workspaces): each key belongs to one and sees only it");
withStorage(projects.command("create").description("create a project; then create its keys with keys create --project").argument("<slug>", "the project's slug"))
  .option("-n, --name <name>", "a display name (default: the slug)")
  .option("--json", "print JSON")
  .action((slug: string, options) => projectsCreate(slug, options, env, cwd));
withStorage(projects.command("list").description("list projects"))
  .option("--json", "print JSON")
  .action((options) => projectsList(options, env, cwd));
withStorage(projects.command("rename").description("rename a project (its slug stays)").argument("<slug>", "the project's slug").argument("<name>", "the new name"))
  .action((slug: string, name: string, options) => projectsRename(slug, name, options, env, cwd));

const workflows = program.command("workflows").description("workflow labels");
withStorage(workflows.command("label").description("point a label at a version (recorded in its history): genserve workflows label invoice@4 production").argument("<slug@version>", "the workflow and version").argument("<label>", "production, staging, …"))
  .option("--json", "print the move as JSON")
  .action((ref: string, label: string, options) => workflowsLabel(ref, label, options, env, cwd));
withStorage(workflows.command("labels").description("show a workflow's label moves, newest first").argument("<slug>", "the workflow"))
  .option("--json", "print as JSON")
  .action((slug: string, options) => workflowsLabels(slug, options, env, cwd));

const runs = program.command("runs").description("inspect runs");
withStorage(runs.command("list").description("list runs, newest first"))
  .option("--status <status>", "queued, running, succeeded, failed or cancelled")
  .option("--workflow <slug>", "only runs of this workflow")
  .option("--limit <n>", "how many (default 20)")
  .option("--json", "print JSON")
  .action((options) => runsList(options, env, cwd));
withStorage(runs.command("show").description("show one run as JSON").argument("<id>", "run id (run_...)"))
  .action((id: string, options) => runsShow(id, options, env, cwd));

withStorage(
  program
    .command("eval")
    .description("run a test suite file as one evaluation and exit by its pass rate (0: met --min-pass, 1: below it, 2: bad suite or setup)")
    .argument("<file>", "the suite (YAML or JSON); schemaFile and attachment paths are relative to it"),
)
  .option("--workflow <slug>", "run the cases against this workflow instead of the suite's")
  .option("--model <alias>", "a model alias of the configuration instead of the workflow's")
  .option("--repeat <n>", "runs per case (stability)")
  .option("--concurrency <n>", "case runs at once (at most limits.evaluationConcurrency)")
  .option("--baseline <id>", "compare with this evaluation, or 'latest': the suite's newest completed one")
  .option("--min-pass <rate>", "the pass rate (0-1) to exit 0 with (default 1: every case run passes)")
  .option("--junit <file>", "also write the report as JUnit XML (one testcase per case and repeat)")
  .option("--json", "print the whole report as JSON instead of a summary")
  .option("--url <url>", "a running genserve (default $GENSERVE_URL); without one, the evaluation runs in this process on the data directory")
  .option("--api-key <key>", "the key to run as (default $GENSERVE_API_KEY; in-process, the first admin key)")
  .action((file: string, options) => evaluate(file, options, env, cwd));

withStorage(program.command("types").description("write TypeScript types and zod schemas of every workflow version's default schema, and a Workflows map by reference"))
  .option("-o, --out <file>", "write to this file instead of standard output")
  .action((options) => typesCommand(options, env, cwd));

withStorage(program.command("migrate").description("apply pending database migrations and exit (serve also does at start)"))
  .action(async (options) => {
    const store = await openStore(options, env, cwd);
    await store.close();
    process.stdout.write("migrations applied\n");
  });

withStorage(program.command("export").description("write all data (keys, runs, pending callbacks, threads, …) as JSON Lines; stop the server first"))
  .option("-o, --out <file>", "write to this new file instead of standard output")
  .action((options) => exportData(options, env, cwd));
withStorage(program.command("import").description("load an export into the configured store, which must be empty (SQLite → PostgreSQL or back)").argument("<file>", "a file written by genserve export"))
  .action((file: string, options) => importData(file, options, env, cwd));

const configCommand = program.command("config").description("configuration");
withStorage(configCommand.command("check").description("validate the configuration file and exit"))
  .action((options) => {
    const config = loadConfigOrExit(options, env, cwd);
    process.stdout.write(
      config.file
        ? `${config.file}: OK (${Object.keys(config.models).length} models, ${Object.keys(config.workflows).length} workflows, ${Object.keys(config.contexts).length} contexts)\n`
        : "no configuration file found; the server would start with no workflows\n",
    );
  });

program
  .command("build")
  .description("build the web application (serve does this when needed)")
  .option("--if-needed", "only when the sources changed since the last build")
  .action((options: { ifNeeded?: boolean }) => (options.ifNeeded ? ensureBuild(PACKAGE_ROOT, (message) => process.stderr.write(`${message}\n`)) : buildApp(PACKAGE_ROOT)));

// A command that fails exits non-zero. `serve` runs Next.js in this process, whose handler of
// uncaught exceptions would otherwise log a start-up failure and keep a half-started server alive.
await program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`genserve: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
