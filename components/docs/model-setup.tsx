/**
 * How to give genserve a model, on the docs page (#configure-models): the playground's banner for
 * an unavailable model links here, and it must work offline, where that banner is most often seen.
 * The full reference of genserve.yaml is README.md's "Configuration".
 */
const EXAMPLES = [
  {
    title: "A model file on this machine",
    text: "Run it in-process with llama.cpp (CPU). Without genserve.yaml, `genserve serve --model /path/to/model.gguf` (or GENSERVE_MODEL) is enough.",
    yaml: `models:
  local:
    provider: llama-cpp
    path: ./models/qwen2.5-0.5b-instruct-q4_k_m.gguf`,
  },
  {
    title: "A model to download once",
    text: "An hf: URI (or an http(s) URL) is downloaded into <data dir>/models on the next start, when this machine can reach it.",
    yaml: `models:
  local:
    provider: llama-cpp
    path: hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf`,
  },
  {
    title: "A provider",
    text: "Any OpenAI-compatible server (Ollama, vLLM, LM Studio…), OpenAI or Anthropic; point your workflows' model at the alias.",
    yaml: `models:
  fast:
    provider: openai-compatible
    baseURL: http://127.0.0.1:11434/v1
    model: qwen2.5:7b
    apiKey: \${OPENAI_API_KEY}
workflows:
  default:
    model: fast`,
  },
];

export function ModelSetup() {
  return (
    <section aria-labelledby="configure-models" className="mt-10">
      <h2 id="configure-models" className="text-2xl font-semibold">
        Configuring models
      </h2>
      <p className="mt-2 text-zinc-700 dark:text-zinc-300">
        Models are configured in <code>genserve.yaml</code> (<code>--config FILE</code>, default <code>./genserve.yaml</code>); restart genserve after changing it. <code>genserve config check</code>{" "}
        validates the file, and <code>GET /api/v1/models</code> says whether each model can run. Three ways to get one:
      </p>
      <div className="mt-4 grid gap-4 lg:grid-cols-3">
        {EXAMPLES.map((e) => (
          <div key={e.title} className="rounded-lg border border-zinc-200 p-4 dark:border-zinc-800">
            <h3 className="font-semibold">{e.title}</h3>
            <p className="mt-1 text-sm text-zinc-700 dark:text-zinc-300">{e.text}</p>
            {/* Wrapped, not scrolled: a scrolling box would need to be reachable by keyboard. */}
            <pre className="mt-2 rounded bg-zinc-100 p-2 text-xs break-all whitespace-pre-wrap dark:bg-zinc-900">{e.yaml}</pre>
          </div>
        ))}
      </div>
    </section>
  );
}
