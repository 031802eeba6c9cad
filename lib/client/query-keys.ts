/** The one query-key factory: never inline string keys. */
export const queryKeys = {
  all: ["genserve"] as const,
  workflows: (key: string) => [...queryKeys.all, key, "workflows"] as const,
  workflowVersions: (key: string, slug: string) => [...queryKeys.all, key, "workflow-versions", slug] as const,
  /** One workflow's definition as a reference names it (`slug`, `slug@4`, `slug@staging`). */
  workflow: (key: string, ref: string) => [...queryKeys.all, key, "workflow", ref] as const,
  workflowLabels: (key: string, slug: string) => [...queryKeys.all, key, "workflow-labels", slug] as const,
  workflowDiff: (key: string, slug: string, from: string, to: string) => [...queryKeys.all, key, "workflow-diff", slug, from, to] as const,
  contexts: (key: string) => [...queryKeys.all, key, "contexts"] as const,
  runs: (key: string, filters: Record<string, string | undefined>) => [...queryKeys.all, key, "runs", filters] as const,
  /** `after`: the thread's last run, so its turns are read again when one ends. */
  thread: (key: string, id: string, after: string | null) => [...queryKeys.all, key, "thread", id, after] as const,
  run: (key: string, id: string) => [...queryKeys.all, key, "run", id] as const,
  usage: (key: string, params: Record<string, string | undefined>) => [...queryKeys.all, key, "usage", params] as const,
  keys: (key: string) => [...queryKeys.all, key, "keys"] as const,
  audit: (key: string, filters: Record<string, string | undefined>) => [...queryKeys.all, key, "audit", filters] as const,
  members: (key: string) => [...queryKeys.all, key, "members"] as const,
  me: (key: string) => [...queryKeys.all, key, "me"] as const,
  models: (key: string) => [...queryKeys.all, key, "models"] as const,
  inbox: (key: string, id: string) => [...queryKeys.all, key, "inbox", id] as const,
  suites: (key: string) => [...queryKeys.all, key, "suites"] as const,
  suite: (key: string, slug: string) => [...queryKeys.all, key, "suite", slug] as const,
  evaluations: (key: string, slug: string) => [...queryKeys.all, key, "evaluations", slug] as const,
  evaluation: (key: string, id: string) => [...queryKeys.all, key, "evaluation", id] as const,
  schemaCheck: (key: string, workflowSlug: string, schemaText: string) => [...queryKeys.all, key, "schema-check", workflowSlug, schemaText] as const,
};
