/**
 * Checks texts against a GBNF grammar with llama.cpp's own grammar engine (through node-llama-cpp),
 * feeding the text byte by byte as tokens of the tiny test model. A text is accepted when every
 * byte is allowed in turn and the end-of-generation token is allowed afterwards (llama.cpp allows
 * it only when the grammar is complete).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getLlama, type Llama, type LlamaGrammar, LlamaGrammarEvaluationState, type LlamaModel, type Token } from "node-llama-cpp";
import { byteToken, TINY_VOCAB, writeTinyModel } from "./tiny-gguf";

interface SamplerBindings {
  AddonSampler: {
    canBeNextTokenForGrammarEvaluationState(state: unknown, token: Token): boolean;
    acceptGrammarEvaluationStateToken(state: unknown, token: Token): void;
  };
}

export interface GrammarChecker {
  grammar(gbnf: string): Promise<LlamaGrammar>;
  accepts(grammar: LlamaGrammar, text: string): boolean;
  /**
   * A random text the grammar allows: a walk that picks each next byte at random among those
   * llama.cpp's engine allows (as sampling with random logits would), leaning towards closing
   * strings and containers as the text grows, and ending when the grammar may end. `null` when the
   * walk passed `maxBytes` first; `stuck` when it reached a point where nothing, not even the end,
   * is allowed (a grammar bug of its own).
   */
  sample(grammar: LlamaGrammar, random: () => number, maxBytes?: number): { text: string } | { stuck: string } | null;
  dispose(): Promise<void>;
}

/**
 * How likely a walk is to pick each byte, before the grammar says which are allowed. Texts stay
 * well-formed UTF-8, as a model's decoded output is: after a lead byte only the continuation bytes
 * that complete a valid character (no overlong forms, no surrogates). llama.cpp's grammar engine is
 * laxer than that (it decodes 0xF8-0xFF and overlong forms as code points), which no sampler of
 * real text exercises.
 */
function byteWeights(length: number, pending: Utf8Pending): Float64Array {
  const weights = new Float64Array(256);
  if (pending.remaining > 0) {
    const [lo, hi] = pending.next;
    for (let b = lo; b <= hi; b++) weights[b] = 1;
    return weights;
  }
  for (let b = 0x20; b < 0x7f; b++) weights[b] = 1;
  const closing = 1 + length / 12;
  weights[0x22] = closing; // "
  weights[0x7d] = closing; // }
  weights[0x5d] = closing; // ]
  weights[0x5c] = 0.3; // \ (escapes are worth trying, not worth dwelling on)
  for (let b = 0; b < 0x20; b++) weights[b] = 0.02; // raw control characters: JSON forbids them in strings
  weights[0x7f] = 0.05;
  for (let b = 0xc2; b <= 0xf4; b++) weights[b] = 0.03; // lead bytes of 2- to 4-byte characters
  return weights;
}

interface Utf8Pending {
  remaining: number;
  /** The range of the next byte. */
  next: [number, number];
}

/** The UTF-8 state after `byte` (RFC 3629 table 3-7). */
function utf8After(pending: Utf8Pending, byte: number): Utf8Pending {
  if (pending.remaining > 0) return { remaining: pending.remaining - 1, next: [0x80, 0xbf] };
  if (byte < 0x80) return { remaining: 0, next: [0, 0] };
  if (byte < 0xe0) return { remaining: 1, next: [0x80, 0xbf] };
  if (byte < 0xf0) return { remaining: 2, next: byte === 0xe0 ? [0xa0, 0xbf] : byte === 0xed ? [0x80, 0x9f] : [0x80, 0xbf] };
  return { remaining: 3, next: byte === 0xf0 ? [0x90, 0xbf] : byte === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf] };
}

export async function createGrammarChecker(): Promise<GrammarChecker> {
  const file = join(mkdtempSync(join(tmpdir(), "genserve-grammar-")), "tiny.gguf");
  writeTinyModel(file);
  const llama: Llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never });
  const model: LlamaModel = await llama.loadModel({ modelPath: file });
  // node-llama-cpp keeps these two primitives internal; they are exactly llama.cpp's grammar check.
  const bindings = (llama as unknown as { _bindings: SamplerBindings })._bindings.AddonSampler;
  const stateOf = (s: LlamaGrammarEvaluationState) => (s as unknown as { _state: unknown })._state;
  return {
    grammar: (gbnf) => llama.createGrammar({ grammar: gbnf }),
    accepts(grammar, text) {
      const state = new LlamaGrammarEvaluationState({ model, grammar });
      for (const byte of Buffer.from(text, "utf8")) {
        const token = byteToken(byte) as Token;
        if (!bindings.canBeNextTokenForGrammarEvaluationState(stateOf(state), token)) return false;
        bindings.acceptGrammarEvaluationStateToken(stateOf(state), token);
      }
      return bindings.canBeNextTokenForGrammarEvaluationState(stateOf(state), TINY_VOCAB.imEnd as Token);
    },
    sample(grammar, random, maxBytes = 4096) {
      const state = new LlamaGrammarEvaluationState({ model, grammar });
      const allowed = (token: number) => bindings.canBeNextTokenForGrammarEvaluationState(stateOf(state), token as Token);
      const bytes: number[] = [];
      let pending: Utf8Pending = { remaining: 0, next: [0, 0] };
      for (;;) {
        const canEnd = pending.remaining === 0 && allowed(TINY_VOCAB.imEnd);
        // Once the value may end, end more often the longer it is.
        if (canEnd && random() < 0.35 + bytes.length / 400) return { text: Buffer.from(bytes).toString("utf8") };
        if (bytes.length >= maxBytes) return null;
        const weights = byteWeights(bytes.length, pending);
        let total = weights.reduce((a, b) => a + b, 0);
        let chosen = -1;
        while (total > 1e-9 && chosen < 0) {
          let r = random() * total;
          let b = 0;
          while (b < 255 && (r >= weights[b]! || weights[b] === 0)) r -= weights[b++]!;
          if (allowed(byteToken(b))) chosen = b;
          else {
            total -= weights[b]!;
            weights[b] = 0;
          }
        }
        if (chosen < 0 && pending.remaining > 0) return null; // a character the grammar does not finish: the walk's choice, not a bug
        if (chosen < 0) return canEnd ? { text: Buffer.from(bytes).toString("utf8") } : { stuck: Buffer.from(bytes).toString("utf8") };
        bindings.acceptGrammarEvaluationStateToken(stateOf(state), byteToken(chosen) as Token);
        bytes.push(chosen);
        pending = utf8After(pending, chosen);
      }
    },
    async dispose() {
      await model.dispose();
    },
  };
}
