import "server-only";
import { WORKFLOW_REF } from "../../domain/names";
import { validationError, type FieldError } from "../../errors";
import type { RunRequest } from "../../runs/run-request";
import { paramMapper, type ParamOf } from "./openai-errors";

/**
 * An OpenAI chat-completions request as a genserve run request.
 *
 * `model` is a workflow reference (`slug`, `slug@4`, `slug@label`). The last message, a user's, is
 * the run's input (its text parts joined by newlines, its `image_url` parts the run's attachments);
 * the user and assistant messages before it are the run's history, oldest first, as a thread's
 * would be. System and developer messages are refused: the workflow's instructions are the system
 * prompt, versioned and evaluated, and a caller's own would silently bypass them — pick a version
 * or label with `model` instead. `response_format` chooses the run: none or `text` a text run,
 * `json_schema` an object run against its schema (always validated and retried as genserve's
 * object runs are, whatever `strict` says; without a schema, the workflow's default one),
 * `json_object` an object run against the workflow's default schema, or any JSON object.
 *
 * Every parameter genserve does not honour is refused by name (400, `param` naming it) rather than
 * ignored: sampling and length are the workflow's settings, tools and several choices are not
 * what a workflow run is. `null` counts as absent, as OpenAI's own API reads it.
 */
export interface ChatRun {
  /** The workflow reference, as the answer's `model` repeats it. */
  model: string;
  /** text: a text run; schema: an object run against `request.schema` (or the workflow's default); json_object: see above. */
  format: "text" | "schema" | "json_object";
  request: RunRequest;
  stream: boolean;
  includeUsage: boolean;
  /** Names genserve's request fields as this request's parameters, for errors. */
  paramOf: ParamOf;
}

/** Accepted and honoured, or accepted because genserve does what they ask anyway (`store: true`: every run is stored; `store: false` is refused). */
const ACCEPTED = new Set(["model", "messages", "response_format", "stream", "stream_options", "n", "user", "store", "logprobs"]);

/** Parameters genserve does not honour, and why (the refusal's message). */
const WORKFLOW_SETTING = "is the workflow's setting, not the caller's: change the workflow (a new version) or name another version or label in `model`";
const NO_TOOLS = "is not supported: a genserve workflow run calls no tools (use response_format json_schema for structured output)";
const REFUSED: Record<string, string> = {
  temperature: WORKFLOW_SETTING,
  top_p: WORKFLOW_SETTING,
  max_tokens: WORKFLOW_SETTING,
  max_completion_tokens: WORKFLOW_SETTING,
  reasoning_effort: WORKFLOW_SETTING,
  verbosity: WORKFLOW_SETTING,
  tools: NO_TOOLS,
  tool_choice: NO_TOOLS,
  parallel_tool_calls: NO_TOOLS,
  functions: NO_TOOLS,
  function_call: NO_TOOLS,
  top_logprobs: "is not supported: genserve does not return log probabilities",
};

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
const refuse = (param: string, message: string): never => {
  throw validationError([{ path: param, message }]);
};

/** Reads the request's parameters, refusing the first it cannot honour. */
export function chatRunOf(body: unknown): ChatRun {
  if (!isObject(body)) refuse("body", "must be a JSON object");
  const b = body as Record<string, unknown>;
  for (const [name, value] of Object.entries(b)) {
    if (value === null || ACCEPTED.has(name)) continue;
    const why = REFUSED[name];
    if (why) refuse(name, why);
    refuse(name, "is not a parameter genserve's chat completions accept (Unrecognized request argument)");
  }
  if (b.n != null && b.n !== 1) refuse("n", "must be 1: a workflow run makes one choice");
  if (b.logprobs != null && b.logprobs !== false) refuse("logprobs", "is not supported: genserve does not return log probabilities");
  if (b.stream != null && typeof b.stream !== "boolean") refuse("stream", "must be a boolean");
  if (b.user != null && typeof b.user !== "string") refuse("user", "must be a string");
  if (b.store != null && b.store !== true) refuse("store", "must be true or absent: every genserve run is stored (its id is the completion's id)");
  const streamOptions = b.stream_options;
  if (streamOptions != null && (!isObject(streamOptions) || (streamOptions.include_usage != null && typeof streamOptions.include_usage !== "boolean"))) {
    refuse("stream_options", "must be an object such as {include_usage: true}");
  }
  if (streamOptions != null && b.stream !== true) refuse("stream_options", "is only allowed with stream: true");

  if (typeof b.model !== "string" || !WORKFLOW_REF.test(b.model)) refuse("model", "must be a genserve workflow reference: slug, slug@version or slug@label (GET /v1/models lists them)");
  const model = b.model as string;
  const { input, history, attachments, lastUser } = messagesOf(b.messages);
  const { format, schema } = formatOf(b.response_format);
  return {
    model,
    format,
    request: {
      input,
      workflowSlug: model,
      ...(history.length > 0 && { history }),
      ...(attachments.length > 0 && { attachments }),
      ...(schema && { schema }),
    },
    stream: b.stream === true,
    includeUsage: b.stream === true && isObject(streamOptions) && streamOptions.include_usage === true,
    paramOf: paramMapper(lastUser),
  };
}

function formatOf(value: unknown): { format: ChatRun["format"]; schema?: Record<string, unknown> } {
  if (value == null) return { format: "text" };
  if (!isObject(value)) return refuse("response_format", 'must be an object: {type: "text"}, {type: "json_object"} or {type: "json_schema", json_schema: {name, schema}}');
  if (value.type === "text") return { format: "text" };
  if (value.type === "json_object") return { format: "json_object" };
  if (value.type !== "json_schema") return refuse("response_format.type", 'must be "text", "json_object" or "json_schema"');
  const spec = value.json_schema;
  if (!isObject(spec)) return refuse("response_format.json_schema", "must be an object {name, schema, strict}");
  if (spec.strict != null && typeof spec.strict !== "boolean") refuse("response_format.json_schema.strict", "must be a boolean");
  if (spec.schema == null) return { format: "schema" };
  if (!isObject(spec.schema)) return refuse("response_format.json_schema.schema", "must be a JSON Schema object");
  return { format: "schema", schema: spec.schema };
}

/** The text of a message's content, and its images when `images` may have any. */
function contentOf(content: unknown, at: string, images: { file: string }[] | null): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return refuse(`${at}.content`, "must be a string or an array of content parts");
  const texts: string[] = [];
  for (const [j, part] of content.entries()) {
    const where = `${at}.content[${j}]`;
    if (!isObject(part)) return refuse(where, "must be a content part object");
    if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
    else if (part.type === "image_url" && images) {
      const url = isObject(part.image_url) ? part.image_url.url : undefined;
      if (typeof url !== "string" || url === "") return refuse(`${where}.image_url.url`, "must be an http(s) or data: URL");
      images.push({ file: url });
    } else if (part.type === "image_url") refuse(where, "images are taken only with the last user message (the run's input); earlier turns are text");
    else refuse(`${where}.type`, `"${String(part.type)}" parts are not supported (text, and image_url in the last user message)`);
  }
  return texts.join("\n");
}

function messagesOf(value: unknown): { input: string; history: NonNullable<RunRequest["history"]>; attachments: { file: string }[]; lastUser: number } {
  if (!Array.isArray(value) || value.length === 0) return refuse("messages", "must be a non-empty array of messages, the last one the user's");
  const history: NonNullable<RunRequest["history"]> = [];
  const attachments: { file: string }[] = [];
  const last = value.length - 1;
  let input = "";
  for (const [i, message] of value.entries()) {
    const at = `messages[${i}]`;
    if (!isObject(message)) return refuse(at, "must be a message object");
    const role = message.role;
    if (role === "system" || role === "developer") {
      refuse(`${at}.role`, `${role} messages are not accepted: the workflow's instructions are the system prompt (change the workflow, or name another version or label in \`model\`)`);
    }
    if (role === "tool" || role === "function") refuse(`${at}.role`, `${role} messages are not supported: a genserve workflow run calls no tools`);
    if (role !== "user" && role !== "assistant") refuse(`${at}.role`, 'must be "user" or "assistant"');
    if (role === "assistant") {
      for (const field of ["tool_calls", "function_call", "audio"]) {
        if (message[field] != null && !(Array.isArray(message[field]) && message[field].length === 0)) refuse(`${at}.${field}`, "is not supported: a genserve workflow run calls no tools");
      }
      if (i === last) refuse(`${at}.role`, "the last message must be the user's: it is the run's input");
    }
    const text = contentOf(message.content, at, i === last ? attachments : null);
    if (i === last) input = text;
    else history.push({ role: role as "user" | "assistant", content: text });
  }
  // Images alone are an input too (the model reads them); text alone, or both, as usual.
  if (input.trim() === "" && attachments.length === 0) refuse(`messages[${last}].content`, "must not be empty: it is the run's input (text, images or both)");
  return { input, history, attachments, lastUser: last };
}

/** For tests: the refusal a body meets, as `param: message`, or null. */
export function refusalOf(body: unknown): FieldError | null {
  try {
    chatRunOf(body);
    return null;
  } catch (error) {
    return (error as { errors?: FieldError[] }).errors?.[0] ?? null;
  }
}
