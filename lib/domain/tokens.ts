/**
 * The one token estimate genserve uses where a model's own tokenizer is not at hand (remote models,
 * the playground's pre-flight estimate): about four characters a token for English text and JSON.
 * Browser-safe.
 */
export const CHARS_PER_TOKEN = 4;

export function estimateTokens(text: string | number): number {
  const chars = typeof text === "number" ? text : text.length;
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
