import "server-only";
import type { Config } from "../config/config-types";
import { usdToNanos } from "../domain/key-limits";
import { admissionCharges, budgetCharges, effectiveLimits, refusal, type WorstCase } from "../keys/limit-meters";
import type { TokenUsage } from "../models/model-client";
import type { MeterCharge, Settlement, Store } from "../store/store-types";
import { DEFAULT_CONTEXT_WINDOW, estimatePromptTokens } from "./budget";
import { computeCost } from "./cost";
import type { Execution, Plan } from "./run-request";

/** What a failed attempt adds to the next one's prompt besides its own output: the validation feedback. */
const FEEDBACK_TOKENS = 256;

/**
 * A run's charges against its key's limits and budgets (lib/keys/limit-meters.ts): what it reserves when
 * admitted — its worst case, from the prompt's size, the output cap and the model's prices — what
 * a retry reserves on the budgets before it is made, and what it settles to when it ends.
 */
export class Metering {
  constructor(private readonly deps: { config: Config; store: Store; now: () => Date }) {}

  /** The reservations of a run being admitted (`slot`: it starts now; a queued run takes its slot when it starts). */
  charges(plan: Plan, at: Date, options: { slot: boolean }): MeterCharge[] {
    return admissionCharges(this.limits(plan), at, this.worstCase(plan, 0), options);
  }

  /** Before attempt 2, 3, …: the budgets must hold what that attempt may cost, or the run ends (402). */
  async reserveRetry(run: Execution): Promise<void> {
    const charges = budgetCharges(this.limits(run.plan), this.deps.now(), this.worstCase(run.plan, this.outputCap(run.plan) + FEEDBACK_TOKENS).nanos);
    if (charges.length === 0) return;
    const at = this.deps.now();
    const admission = await this.deps.store.runs.reserve(run.plan.id, run.plan.principal.keyId, charges, at.toISOString());
    if (!admission.ok) throw refusal(admission.refused, admission.states, at);
  }

  /** What a run that ended settles to: one run, the tokens it used, what they cost. */
  settlement(usage: TokenUsage, cost: string): Settlement {
    const nanos = usdToNanos(cost) ?? 0;
    return { rpm: 1, tpm: usage.inputTokens + usage.outputTokens, daily: nanos, monthly: nanos };
  }

  private limits(plan: Plan) {
    return effectiveLimits(plan.principal.limits, this.deps.config.limits);
  }

  /** The most one attempt may use: the prompt (plus `extraInput`) and the whole output cap, at the model's prices. */
  private worstCase(plan: Plan, extraInput: number): WorstCase {
    const input = this.promptTokens(plan) + extraInput;
    const output = this.outputCap(plan);
    const pricing = this.deps.config.models[plan.workflow.model]?.pricing ?? { input: 0, output: 0 };
    return { tokens: input + output, nanos: usdToNanos(computeCost({ inputTokens: input, outputTokens: output }, pricing)) ?? 0 };
  }

  private promptTokens(plan: Plan): number {
    return plan.record.promptTokens ?? estimatePromptTokens(plan.prompt);
  }

  /** The output cap: what the engine allowed (local), the workflow's limit, or what the window leaves. */
  private outputCap(plan: Plan): number {
    if (plan.record.outputTokenLimit !== undefined) return plan.record.outputTokenLimit;
    if (plan.workflow.maxOutputTokens !== undefined) return plan.workflow.maxOutputTokens;
    const window = this.deps.config.models[plan.workflow.model]?.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
    return Math.max(0, window - this.promptTokens(plan));
  }
}
