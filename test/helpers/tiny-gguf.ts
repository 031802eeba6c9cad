/**
 * Writes a tiny random-weight Llama-architecture model as a GGUF file, so the test suite can run the
 * real llama.cpp engine without downloading anything.
 *
 * Vocabulary: SentencePiece ("llama") with `<unk>`, `<s>`, `</s>`, the 256 byte tokens `<0x00>`…`<0xFF>`
 * the ChatML control tokens `<|im_start|>` / `<|im_end|>`, and `▁` (SentencePiece's space); every
 * other text tokenizes through byte fallback. A ChatML `tokenizer.chat_template` is included so the chat-template path is exercised.
 *
 * The weights are random (seeded), with one twist: dimension 0 of every token embedding is a large
 * constant, so after the final RMS norm it behaves like a bias input, and column 0 of the output
 * matrix becomes a per-token logit bias. The bias favours JSON punctuation and end-of-turn, which
 * keeps random strings and texts short; everything else about the output is noise. Constrained
 * decoding is what makes the output follow a schema, not the weights.
 *
 * Format: GGUF v3 (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md), all tensors F32.
 */
import { writeFileSync } from "node:fs";

export interface TinyModelOptions {
  seed?: number;
  embedding?: number;
  layers?: number;
  heads?: number;
  feedForward?: number;
  contextLength?: number;
  name?: string;
  /** Leave out the chat template (the engine then falls back to a generic prompt format). */
  chatTemplate?: boolean;
}

export const TINY_VOCAB = { unk: 0, bos: 1, eos: 2, firstByte: 3, imStart: 259, imEnd: 260, space: 261, size: 262 } as const;

/** The token id of one byte in the tiny vocabulary. */
export const byteToken = (byte: number): number => TINY_VOCAB.firstByte + byte;

const CHATML =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

enum T {
  U32 = 4,
  I32 = 5,
  F32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  U64 = 10,
}

type Value =
  | { t: T.U32 | T.I32 | T.F32; v: number }
  | { t: T.BOOL; v: boolean }
  | { t: T.STRING; v: string }
  | { t: T.ARRAY; of: T.STRING; v: string[] }
  | { t: T.ARRAY; of: T.F32 | T.I32; v: number[] };

class Writer {
  private chunks: Buffer[] = [];
  size = 0;
  push(b: Buffer) {
    this.chunks.push(b);
    this.size += b.length;
  }
  private scalar(bytes: number, write: (b: Buffer) => void) {
    const b = Buffer.alloc(bytes);
    write(b);
    this.push(b);
  }
  u32 = (n: number) => this.scalar(4, (b) => b.writeUInt32LE(n));
  i32 = (n: number) => this.scalar(4, (b) => b.writeInt32LE(n));
  f32 = (n: number) => this.scalar(4, (b) => b.writeFloatLE(n));
  u64 = (n: number) => this.scalar(8, (b) => b.writeBigUInt64LE(BigInt(n)));
  str(s: string) {
    const b = Buffer.from(s, "utf8");
    this.u64(b.length);
    this.push(b);
  }
  pad(alignment: number) {
    const rest = this.size % alignment;
    if (rest) this.push(Buffer.alloc(alignment - rest));
  }
  value(value: Value) {
    this.u32(value.t);
    switch (value.t) {
      case T.U32:
        return this.u32(value.v);
      case T.I32:
        return this.i32(value.v);
      case T.F32:
        return this.f32(value.v);
      case T.BOOL:
        return this.push(Buffer.from([value.v ? 1 : 0]));
      case T.STRING:
        return this.str(value.v);
      case T.ARRAY:
        this.u32(value.of);
        this.u64(value.v.length);
        for (const item of value.v) {
          if (value.of === T.STRING) this.str(item as string);
          else if (value.of === T.F32) this.f32(item as number);
          else this.i32(item as number);
        }
    }
  }
  concat() {
    return Buffer.concat(this.chunks);
  }
}

/** mulberry32: small, seeded, good enough for weights. */
function rng(seed: number) {
  let a = seed >>> 0;
  const uniform = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  // Box-Muller
  return (std: number) => std * Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
}

function tokenBias(id: number): number {
  if (id === TINY_VOCAB.imEnd || id === TINY_VOCAB.eos) return 1.5;
  if (id === TINY_VOCAB.space) return 1;
  if (id < TINY_VOCAB.firstByte || id === TINY_VOCAB.imStart) return -4;
  const ch = String.fromCharCode(id - TINY_VOCAB.firstByte);
  if (ch === '"') return 5;
  if ("}]".includes(ch)) return 4;
  if (",:".includes(ch)) return 1.5;
  if (/[0-9a-z ]/.test(ch)) return 1;
  if (id - TINY_VOCAB.firstByte >= 0x80) return -1;
  return 0;
}

/** Writes the model to `file` and returns its size in bytes. */
export function writeTinyModel(file: string, options: TinyModelOptions = {}): number {
  const n = {
    embd: options.embedding ?? 64,
    layers: options.layers ?? 2,
    heads: options.heads ?? 4,
    ff: options.feedForward ?? 128,
    ctx: options.contextLength ?? 4096,
    vocab: TINY_VOCAB.size,
  };
  const normal = rng(options.seed ?? 1);

  const tokens: string[] = ["<unk>", "<s>", "</s>"];
  const types: number[] = [2, 3, 3];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(6);
  }
  tokens.push("<|im_start|>", "<|im_end|>", "\u2581");
  types.push(3, 3, 1);

  const meta: [string, Value][] = [
    ["general.architecture", { t: T.STRING, v: "llama" }],
    ["general.name", { t: T.STRING, v: options.name ?? "genserve-tiny-test" }],
    ["general.alignment", { t: T.U32, v: 32 }],
    ["llama.context_length", { t: T.U32, v: n.ctx }],
    ["llama.embedding_length", { t: T.U32, v: n.embd }],
    ["llama.block_count", { t: T.U32, v: n.layers }],
    ["llama.feed_forward_length", { t: T.U32, v: n.ff }],
    ["llama.attention.head_count", { t: T.U32, v: n.heads }],
    ["llama.attention.head_count_kv", { t: T.U32, v: n.heads }],
    ["llama.attention.layer_norm_rms_epsilon", { t: T.F32, v: 1e-5 }],
    ["llama.rope.dimension_count", { t: T.U32, v: n.embd / n.heads }],
    ["llama.vocab_size", { t: T.U32, v: n.vocab }],
    ["tokenizer.ggml.model", { t: T.STRING, v: "llama" }],
    ["tokenizer.ggml.tokens", { t: T.ARRAY, of: T.STRING, v: tokens }],
    ["tokenizer.ggml.scores", { t: T.ARRAY, of: T.F32, v: tokens.map(() => 0) }],
    ["tokenizer.ggml.token_type", { t: T.ARRAY, of: T.I32, v: types }],
    ["tokenizer.ggml.unknown_token_id", { t: T.U32, v: TINY_VOCAB.unk }],
    ["tokenizer.ggml.bos_token_id", { t: T.U32, v: TINY_VOCAB.bos }],
    ["tokenizer.ggml.eos_token_id", { t: T.U32, v: TINY_VOCAB.imEnd }],
    ["tokenizer.ggml.add_bos_token", { t: T.BOOL, v: true }],
    ["tokenizer.ggml.add_space_prefix", { t: T.BOOL, v: false }],
  ];
  if (options.chatTemplate !== false) meta.push(["tokenizer.chat_template", { t: T.STRING, v: CHATML }]);

  // Tensors: [name, dims (innermost first, as GGUF stores them), values]
  const tensors: [string, number[], Float32Array][] = [];
  const matrix = (name: string, cols: number, rows: number, fill: (row: number, col: number) => number) => {
    const data = new Float32Array(cols * rows);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) data[r * cols + c] = fill(r, c);
    tensors.push([name, [cols, rows], data]);
  };
  const ones = (name: string) => tensors.push([name, [n.embd], new Float32Array(n.embd).fill(1)]);

  matrix("token_embd.weight", n.embd, n.vocab, (_t, c) => (c === 0 ? 8 : normal(1)));
  for (let l = 0; l < n.layers; l++) {
    const small = () => normal(0.02);
    ones(`blk.${l}.attn_norm.weight`);
    for (const w of ["attn_q", "attn_k", "attn_v", "attn_output"]) matrix(`blk.${l}.${w}.weight`, n.embd, n.embd, small);
    ones(`blk.${l}.ffn_norm.weight`);
    matrix(`blk.${l}.ffn_gate.weight`, n.embd, n.ff, small);
    matrix(`blk.${l}.ffn_up.weight`, n.embd, n.ff, small);
    matrix(`blk.${l}.ffn_down.weight`, n.ff, n.embd, small);
  }
  ones("output_norm.weight");
  // After the final norm, dimension 0 is about 8/rms ≈ 6.5 for every position; column 0 is the bias.
  matrix("output.weight", n.embd, n.vocab, (t, c) => (c === 0 ? tokenBias(t) / 6.5 : normal(0.25)));

  const w = new Writer();
  w.push(Buffer.from("GGUF", "ascii"));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(meta.length);
  for (const [key, value] of meta) {
    w.str(key);
    w.value(value);
  }
  let offset = 0;
  for (const [name, dims, data] of tensors) {
    w.str(name);
    w.u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(0); // GGML_TYPE_F32
    w.u64(offset);
    offset += Math.ceil(data.byteLength / 32) * 32;
  }
  w.pad(32);
  for (const [, , data] of tensors) {
    w.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    w.pad(32);
  }
  const bytes = w.concat();
  writeFileSync(file, bytes);
  return bytes.length;
}
