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
  dispose(): Promise<void>;
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
    async dispose() {
      await model.dispose();
    },
  };
}
