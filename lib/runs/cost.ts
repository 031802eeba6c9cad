import "server-only";
/**
 * Cost in US dollars as an exact decimal string: tokens × price per million tokens, computed in
 * integers so that "0.0000555" is never printed as 0.000055499999.
 */

interface Decimal {
  digits: bigint;
  scale: number; // value = digits / 10^scale
}

function toDecimal(value: number): Decimal {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`price must be a finite non-negative number, got ${value}`);
  // toString gives the shortest round-tripping form; expand exponent notation.
  let text = value.toString();
  if (/e/i.test(text)) text = value.toFixed(20).replace(/0+$/, "");
  const [whole = "0", fraction = ""] = text.split(".");
  return { digits: BigInt(whole + fraction), scale: fraction.length };
}

export function computeCost(usage: { inputTokens: number; outputTokens: number }, pricing: { input: number; output: number }): string {
  const input = toDecimal(pricing.input);
  const output = toDecimal(pricing.output);
  const scale = Math.max(input.scale, output.scale);
  const align = (d: Decimal) => d.digits * 10n ** BigInt(scale - d.scale);
  const total = BigInt(usage.inputTokens) * align(input) + BigInt(usage.outputTokens) * align(output);
  return formatDecimal(total, scale + 6); // prices are per million tokens
}

function formatDecimal(digits: bigint, scale: number): string {
  if (digits === 0n) return "0";
  const text = digits.toString().padStart(scale + 1, "0");
  const whole = text.slice(0, text.length - scale);
  const fraction = text.slice(text.length - scale).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}
