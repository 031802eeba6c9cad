import "server-only";
import type { DecodingMode } from "../domain/run-vocabulary";
import { GenserveError, isGenserveError, type FieldError } from "../errors";
import { PartialJsonParser } from "../json/partial";
import { providerFailureDetails } from "../models/provider-errors";
import { messageText, type ChatMessage, type ModelRequest, type ModelResult } from "../models/model-client";
import { estimateTokens } from "../domain/tokens";
import type { SchemaCompiler } from "../schema/validator";
import { childSignal } from "./deadline";
import { FieldReporter, type FieldEvent } from "./field-reporter";
import { PaceRecorder } from "./pace";
import { PartialValidator } from "./partial-validator";
import { retryFeedback } from "./prompt";
import type { TraceSpan } from "../observability/tracing";
import type { Execution, Plan } from "./run-request";
import type { GroundedLeaf } from "../domain/grounding";
import type { GroundingPool } from "../grounding/grounding-pool";
import { ungroundedProblems } from "./grounding-check";

/** What a successful run produced. */
export interface Attempted {
  value: unknown;
  /** The model id the provider reported, when it did. */
  modelId?: string;
  /** For object runs asked for `grounding`: where each leaf of the value was found. */
  grounding?: GroundedLeaf[];
  /** Why the model stopped (`stop`, `length`…), as its client reported it. */
  finishReason?: string;
}

/** Receives a streamed run's text as it arrives, and the start of every attempt after the first. */
export interface Streaming {
  onText(text: string): void;
  onRestart(attempt: number): void;
  /** When given: each value of the attempt's object as it closes, once (the stream asked for field events). */
  onField?(field: FieldEvent): void;
}

/** The longest wait between two attempts after a transient provider failure. */
const MAX_RETRY_WAIT_MS = 5_000;

/** How much of the model's last invalid output an `output_invalid` problem carries. */
export const LAST_OUTPUT_CHARS = 32_768;

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * The attempt stage: calls the model for a planned run, within the workflow's retry budget
 * (`retries`), shared by invalid outputs (retried with the validation errors fed back) and
 * transient provider failures (retried after a backoff that honours Retry-After). It depends on the
 * plan's model client and prepared schema, and on the compiler for checking streamed parts; it
 * records nothing (the outcome stage does) but tallies tokens and attempts on the execution.
 */
export class Attempts {
  constructor(
    private readonly schemas: SchemaCompiler,
    /** Aligns values with their sources; without it, runs are not grounded. */
    private readonly grounder?: GroundingPool,
  ) {}

  /** An object that validates against the plan's schema, or `output_invalid`; never an invalid value. */
  async object(run: Execution, signal: AbortSignal, streaming?: Streaming): Promise<Attempted> {
    const { plan } = run;
    const prepared = plan.prepared!;
    let messages = plan.prompt.messages;
    let problems: FieldError[] = [];
    let lastText = "";
    /** The last attempt failed only because `x-grounded` values were not in the sources. */
    let ungrounded = false;
    const maxAttempts = plan.workflow.retries + 1;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      // An attempt left behind at the deadline (its call ignored the abort) starts no other.
      signal.throwIfAborted();
      if (attempt > 1) await run.beforeAttempt?.(attempt);
      run.attempts = attempt;
      if (attempt > 1) streaming?.onRestart(attempt);
      const request = modelRequest(plan, messages, signal);
      let result: ModelResult;
      let parsed: Parsed;
      const call = callSpan(run, attempt);
      try {
        if (streaming) {
          const streamed = await this.streamed(run, request, streaming, signal);
          if ("doomed" in streamed) {
            call.set({ "genserve.attempt.outcome": "stopped early: a closed part can never validate" });
            call.end();
            problems = streamed.doomed;
            lastText = streamed.text;
            run.log.warn({ attempt, problems: problems.length, at: problems[0]?.path }, "stopped early: a closed part of the output can never validate");
            messages = [...plan.prompt.messages, ...retryFeedback(streamed.text, problems)];
            continue;
          }
          result = streamed;
          parsed = streamed.parsed; // already parsed, incrementally, as it streamed
        } else {
          result = await plan.client.generate(request);
          parsed = parseJsonOutput(result.text);
        }
      } catch (error) {
        endCall(call, error);
        await this.beforeRetry(run, error, attempt, signal);
        continue;
      }
      endCall(call, result);
      tally(run, result);
      lastText = result.text;
      if (parsed.ok) {
        const validation = run.span.child("validate", { "genserve.attempt": attempt });
        const check = await prepared.validate(parsed.value, { owner: plan.principal.keyId, signal }).finally(() => validation.end());
        validation.set({ "genserve.validation.valid": check.valid, ...(!check.valid && { "genserve.validation.errors": check.errors.length }) });
        // The root's field event: judged by the whole object's validation (and its grounding), as nothing else can.
        if (check.valid) {
          const grounded = await this.ground(run, parsed.value, signal);
          streaming?.onField?.({ pointer: "", value: parsed.value, valid: grounded.problems.length === 0 });
          if (grounded.problems.length === 0) return { value: parsed.value, modelId: result.modelId, finishReason: result.finishReason, ...(grounded.report && { grounding: grounded.report }) };
          problems = grounded.problems;
          ungrounded = true;
        } else {
          streaming?.onField?.({ pointer: "", value: parsed.value, valid: false });
          problems = check.errors;
          ungrounded = false;
        }
      } else {
        problems = [{ path: "/", message: parsed.message }];
        ungrounded = false;
      }
      run.log.warn({ attempt, problems: problems.length, finishReason: result.finishReason }, "output failed validation");
      messages = [...plan.prompt.messages, ...retryFeedback(result.text, problems)];
    }
    const tries = `${maxAttempts} attempt${maxAttempts > 1 ? "s" : ""}`;
    throw new GenserveError("output_invalid", {
      detail: ungrounded
        ? `The model's output had values marked x-grounded that are not in the input or attachments after ${tries}.`
        : `The model's output did not validate against the schema after ${tries}.`,
      errors: problems.slice(0, 50),
      // What the model last returned, so a caller (and the playground) can see what failed, and where.
      extensions: { lastOutput: lastText.length > LAST_OUTPUT_CHARS ? lastText.slice(0, LAST_OUTPUT_CHARS) : lastText },
    });
  }

  /**
   * A valid value aligned with the run's sources when it asks for grounding or has `x-grounded`
   * properties (in the grounding worker pool, within its budget): the alignment to report, and a
   * problem for each `x-grounded` value not found.
   */
  private async ground(run: Execution, value: unknown, signal: AbortSignal): Promise<{ report?: GroundedLeaf[]; problems: FieldError[] }> {
    const grounding = run.plan.grounding;
    if (!grounding || !this.grounder) return { problems: [] };
    const span = run.span.child("ground");
    try {
      const leaves = await this.grounder.align(value, grounding.docs, { owner: run.plan.principal.keyId, signal });
      const problems = ungroundedProblems(leaves, grounding.required);
      span.set({ "genserve.grounding.leaves": leaves.length, "genserve.grounding.ungrounded": problems.length });
      return { report: grounding.report ? leaves : undefined, problems };
    } finally {
      span.end();
    }
  }

  /** The model's text; transient provider failures are retried within the budget. */
  async text(run: Execution, signal: AbortSignal): Promise<Attempted & { value: string }> {
    for (let attempt = 1; ; attempt++) {
      signal.throwIfAborted();
      if (attempt > 1) await run.beforeAttempt?.(attempt);
      run.attempts = attempt;
      const call = callSpan(run, attempt);
      try {
        const result = await run.plan.client.generate(modelRequest(run.plan, run.plan.prompt.messages, signal));
        endCall(call, result);
        tally(run, result);
        return { value: result.text, modelId: result.modelId, finishReason: result.finishReason };
      } catch (error) {
        endCall(call, error);
        await this.beforeRetry(run, error, attempt, signal);
      }
    }
  }

  /**
   * A model call failed. Failures the provider calls transient (429, 5xx, a dropped connection) are
   * retried while the budget and the deadline last; anything else, or the last attempt, ends the run.
   */
  private async beforeRetry(run: Execution, error: unknown, attempt: number, signal: AbortSignal): Promise<void> {
    const known = isGenserveError(error) ? error : null;
    if (!known || known.code !== "model_error" || !known.retryable || attempt > run.plan.workflow.retries || signal.aborted) throw error;
    // A provider asking for a longer wait than a run makes (an hour, say), or a wait that would
    // outlast the run's deadline: the provider's error now, with its Retry-After, not a time-out later.
    if (known.retryAfterMs !== undefined && known.retryAfterMs > MAX_RETRY_WAIT_MS) throw error;
    const waitMs = Math.min(known.retryAfterMs ?? 250 * 2 ** (attempt - 1), MAX_RETRY_WAIT_MS);
    if (run.deadlineAt !== undefined && Date.now() + waitMs >= run.deadlineAt) throw error;
    run.log.warn({ attempt, upstreamStatus: known.upstreamStatus, provider: providerFailureDetails(known), waitMs }, "model call failed; retrying");
    await new Promise<void>((resolve, reject) => {
      const abort = () => (clearTimeout(timer), reject(signal.reason));
      const timer = setTimeout(() => (signal.removeEventListener("abort", abort), resolve()), waitMs);
      signal.addEventListener("abort", abort, { once: true });
    });
  }

  /**
   * One streamed attempt: forwards each delta, parses the text incrementally (one pass) and checks
   * every part as it closes (reported as a field event when asked, after the delta that closed it).
   * A part that can never satisfy the schema stops the attempt at once.
   */
  private async streamed(
    run: Execution,
    request: ModelRequest,
    { onText, onField }: Streaming,
    signal: AbortSignal,
  ): Promise<(ModelResult & { parsed: Parsed }) | { doomed: FieldError[]; text: string }> {
    const { plan } = run;
    // Aborted by the run's signal, or by this attempt when a part can never validate.
    const stop = childSignal(request.abortSignal);
    const closed: [string, unknown][] = [];
    const parser = new PartialJsonParser((path, value) => closed.push([path, value]));
    const partial = new PartialValidator(plan.prepared!.schema, this.schemas, { owner: plan.principal.keyId, signal });
    const fields = onField && new FieldReporter(onField);
    let text = "";
    let finish: Omit<ModelResult, "text"> | undefined;
    // How this attempt's text arrived, for replays at its pace (share links).
    const pace = (run.pace = new PaceRecorder());
    const inFlight = (run.inFlight = { request, text: "" });
    run.partial = "";
    try {
      for await (const part of plan.client.stream({ ...request, abortSignal: stop.signal })) {
        if (part.type === "finish") {
          finish = part;
          continue;
        }
        text += part.text;
        inFlight.text = text;
        run.partial = text;
        pace.mark(Date.now() - run.startedAt, text.length);
        onText(part.text);
        parser.push(part.text);
        let doomed: FieldError[] = parser.error ? [{ path: "/", message: `the output is not valid JSON (${parser.error})` }] : [];
        while (doomed.length === 0 && closed.length > 0) {
          const [path, value] = closed.shift()!;
          const verdict = await partial.verdict(path, value);
          // The root is reported after the whole value is validated (object()).
          doomed = fields && path !== "" ? fields.closed(path, value, verdict) : (verdict ?? []);
        }
        if (doomed.length > 0) {
          stop.abort();
          countInFlight(run);
          return { doomed, text };
        }
      }
    } catch (error) {
      // Cut short (cancelled, timed out, the connection dropped) after the model wrote: the
      // provider reports no usage then, but the tokens were spent.
      if (!finish) countInFlight(run);
      throw error;
    } finally {
      stop.dispose();
      if (run.inFlight === inFlight) run.inFlight = undefined;
    }
    if (!finish) throw new GenserveError("model_error", { detail: "The model stream ended without finishing." });
    const parsed: Parsed = !parser.done
      ? { ok: false, message: text.trim() === "" ? "the output is empty; a JSON value is required" : "the output is not valid JSON (it ended before the value was complete)" }
      : { ok: true, value: parser.result() };
    return { text, ...finish, parsed };
  }
}

/** The model request of one attempt of a planned run. */
export function modelRequest(plan: Plan, messages: ChatMessage[], signal: AbortSignal): ModelRequest {
  return {
    system: plan.prompt.system,
    messages,
    temperature: plan.workflow.temperature,
    maxOutputTokens: plan.workflow.maxOutputTokens,
    json: plan.prepared && { schema: plan.prepared.schema, hash: plan.prepared.hash, name: "output" },
    abortSignal: signal,
    owner: plan.principal.keyId,
  };
}

/** One model call as a child of the run's span: `chat {model}`, with the GenAI semantic-convention attributes. */
function callSpan(run: Execution, attempt: number): TraceSpan {
  const model = run.plan.client.modelId;
  return run.span.child(`chat ${model}`, { "gen_ai.operation.name": "chat", "gen_ai.request.model": model, "genserve.attempt": attempt }, "client");
}

function endCall(span: TraceSpan, outcome: ModelResult | unknown): void {
  if (outcome && typeof outcome === "object" && "usage" in outcome && "finishReason" in outcome) {
    const result = outcome as ModelResult;
    span.set({
      "gen_ai.usage.input_tokens": result.usage.inputTokens,
      "gen_ai.usage.output_tokens": result.usage.outputTokens,
      "gen_ai.response.finish_reasons": [result.finishReason],
      ...(result.modelId && { "gen_ai.response.model": result.modelId }),
    });
  } else {
    const known = isGenserveError(outcome) ? outcome : null;
    span.fail(known?.code ?? "internal", known?.detail ?? String((outcome as Error)?.message ?? outcome));
  }
  span.end();
}

/**
 * A streamed attempt stopped before the provider reported its usage (cut short, or left behind at
 * the run's deadline): its prompt and the text it wrote so far, estimated, so that the run's tokens
 * and cost (and what it settles to on the key's budgets) are never counted as nothing. Counted once.
 */
export function countInFlight(run: Execution): void {
  const inFlight = run.inFlight;
  run.inFlight = undefined;
  if (!inFlight || inFlight.text.length === 0) return;
  const { request, text } = inFlight;
  run.usage.inputTokens += estimateTokens(request.system.length + request.messages.reduce((n, m) => n + messageText(m.content).length, 0));
  run.usage.outputTokens += estimateTokens(text);
}

/** Adds an attempt's tokens to the run's, and notes how its output was held to the schema. */
function tally(run: Execution, result: ModelResult): void {
  run.usage.inputTokens += result.usage.inputTokens;
  run.usage.outputTokens += result.usage.outputTokens;
  run.decoding = decodingOf(run.plan, result);
  for (const warning of result.warnings ?? []) if (!run.warnings.includes(warning)) run.warnings.push(warning);
}

/** What held an attempt's output to the schema: the adapter says when it knows. */
function decodingOf(plan: Plan, result: ModelResult): DecodingMode {
  if (result.decoding) return result.decoding;
  if (!plan.prepared) return "none";
  return plan.client.capabilities.nativeStructuredOutput ? "provider" : "prompt";
}

/** Parses a generated (not streamed) JSON output; one surrounding code fence is tolerated. */
export function parseJsonOutput(text: string): Parsed {
  let body = text.trim();
  const fenced = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/.exec(body);
  if (fenced) body = fenced[1]!.trim();
  if (body === "") return { ok: false, message: "the output is empty; a JSON value is required" };
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (error) {
    return { ok: false, message: `the output is not valid JSON (${(error as Error).message})` };
  }
}
