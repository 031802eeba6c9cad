/**
 * Browser-safe. Where a parsed JSON value nests deeper than `max` levels of objects and arrays, as
 * the path to the first such place; null when it does not. Iterative, so a value nested thousands of
 * levels deep (which JSON.parse accepts) is measured without exhausting the stack.
 */
export function findTooDeep(value: unknown, max: number): (string | number)[] | null {
  interface Frame {
    node: unknown;
    depth: number;
    parent: Frame | null;
    key: string | number;
  }
  const stack: Frame[] = [{ node: value, depth: 0, parent: null, key: "" }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { node } = frame;
    if (node === null || typeof node !== "object") continue;
    const depth = frame.depth + 1;
    if (depth > max) {
      const path: (string | number)[] = [];
      for (let f: Frame | null = frame; f?.parent; f = f.parent) path.unshift(f.key);
      return path;
    }
    if (Array.isArray(node)) node.forEach((child, i) => stack.push({ node: child, depth, parent: frame, key: i }));
    else for (const [key, child] of Object.entries(node)) stack.push({ node: child, depth, parent: frame, key });
  }
  return null;
}
