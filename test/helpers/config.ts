/** A context far larger than a quarter of the "small" model's 2000-token window: 30 topics. */
export const MANUAL_TOPICS = Array.from({ length: 30 }, (_, i) => `Topic ${i}: the ${["kettle", "toaster", "blender", "oven", "fridge", "mixer"][i % 6]}${i} section. ${"Filler sentence about nothing in particular. ".repeat(6)}`);

/** The genserve.yaml the HTTP suites run with, pointing at a fake upstream. */
export function testConfig(upstreamUrl: string, extra = "", options: { localModel?: string } = {}): string {
  // The local engine on a tiny generated model, and a local model whose file is missing.
  const localModels = options.localModel
    ? `
  tiny:
    provider: llama-cpp
    path: ${options.localModel}
  gone:
    provider: llama-cpp
    path: ./no-such-model.gguf`
    : "";
  const localWorkflows = options.localModel
    ? `
  on-device:
    description: The local engine (a tiny random model under a grammar)
    model: tiny
    maxOutputTokens: 400
    retries: 0
  no-model:
    description: A local model whose file is missing
    model: gone`
    : "";
  return `
models:
  fast:
    provider: openai-compatible
    baseURL: ${upstreamUrl}
    model: fake-7b
    apiKey: \${FAKE_UPSTREAM_KEY:-sk-test}
    pricing: { input: 0.15, output: 0.60 }
  free:
    provider: openai-compatible
    baseURL: ${upstreamUrl}
    model: fake-free
  eyes:
    provider: openai-compatible
    baseURL: ${upstreamUrl}
    model: fake-vision
    vision: true
  small:
    provider: openai-compatible
    baseURL: ${upstreamUrl}
    model: fake-small
    contextWindow: 2000${localModels}
workflows:
  extract-invoice:
    description: Extract the fields of an invoice
    model: fast
    instructions: |
      You extract invoice fields from the text you are given.
    temperature: 0
    maxOutputTokens: 1024
    retries: 2
    timeoutMs: 60000
    contexts: [invoice-rules]
  no-retry:
    description: Fails fast
    model: free
    retries: 0
  look:
    description: A workflow on a vision model
    model: eyes
    retries: 0
  support:
    description: Answers from a manual too large for its model's window
    model: small
    maxOutputTokens: 200
    retries: 0
    contexts: [manual]
  small-window:
    description: A model with a small context window
    model: small
    maxOutputTokens: 500
  slow:
    description: A short time-out
    model: free
    retries: 0
    timeoutMs: 500${localWorkflows}
contexts:
  invoice-rules:
    title: Invoice rules
    content: |
      Amounts are in EUR unless stated.
  tone:
    title: Tone
    content: Be concise.
  manual:
    title: Product manual
    content: ${JSON.stringify(MANUAL_TOPICS.join("\n\n"))}
${extra}`;
}

export const INVOICE_SCHEMA = {
  type: "object",
  properties: {
    number: { type: "string" },
    total: { type: "number", minimum: 0 },
    currency: { enum: ["EUR", "USD"] },
    lines: { type: "array", items: { $ref: "#/$defs/line" } },
  },
  required: ["number", "total", "currency"],
  additionalProperties: false,
  $defs: { line: { type: "object", properties: { description: { type: "string" }, amount: { type: "number" } }, required: ["description"] } },
};

export const CALLBACK = { url: "https://example.com/hooks/genserve", customProperties: { ticket: 42 } };
