/**
 * Property access for keys that come from outside (schemas, objects a model writes, names callers
 * send). Browser-safe; part of the bottom layer.
 *
 * `obj[key]` with such a key finds inherited members ("toString", "constructor"), and
 * `obj[key] = v` with "__proto__" replaces the object's prototype instead of adding a property —
 * through a clone that can reach and pollute `Object.prototype` itself. These helpers see and
 * write own properties only.
 */

/** The value of `key` when it is an own property of `value`, else undefined. */
export function own(value: unknown, key: string): unknown {
  return value !== null && typeof value === "object" && Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

/** Adds or replaces the own, enumerable property `key` (also when it is "__proto__"). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}
