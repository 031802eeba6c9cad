import type { Page } from "@playwright/test";

/** How many React commits re-rendered each counted element (see countRenders). */
export type RenderCounts = Record<string, number>;

/**
 * Counts how often React re-renders chosen elements, in the production build: a stand-in for
 * React's developer-tools hook (which React calls after every commit, development or production)
 * walks the committed tree and notes each counted element whose props are a new object — which
 * happens exactly when the component that draws it ran again. `targets` maps a name to a CSS
 * selector; a commit is counted only while `when` (a selector) matches something in the page.
 */
export async function countRenders(page: Page, targets: Record<string, string>, when: string): Promise<void> {
  await page.addInitScript(
    ({ targets, when }) => {
      interface Fiber {
        tag: number;
        child: Fiber | null;
        sibling: Fiber | null;
        stateNode: unknown;
        memoizedProps: unknown;
      }
      const w = window as unknown as { __renders: Record<string, number>; __REACT_DEVTOOLS_GLOBAL_HOOK__?: unknown };
      w.__renders = Object.fromEntries(Object.keys(targets).map((k) => [k, 0]));
      const last = new Map<string, unknown>();
      const HOST = 5;
      w.__REACT_DEVTOOLS_GLOBAL_HOOK__ = {
        supportsFiber: true,
        renderers: new Map(),
        inject: () => 1,
        checkDCE: () => {},
        onScheduleFiberRoot: () => {},
        onCommitFiberUnmount: () => {},
        onPostCommitFiberRoot: () => {},
        onCommitFiberRoot: (_id: number, root: { current: Fiber }) => {
          const counting = document.querySelector(when) !== null;
          const found = new Map<string, unknown>();
          const wanted = Object.entries(targets).map(([name, selector]) => [name, document.querySelector(selector)] as const);
          const stack: Fiber[] = [root.current];
          while (stack.length) {
            const fiber = stack.pop()!;
            if (fiber.tag === HOST) for (const [name, el] of wanted) if (el && fiber.stateNode === el) found.set(name, fiber.memoizedProps);
            if (fiber.sibling) stack.push(fiber.sibling);
            if (fiber.child) stack.push(fiber.child);
          }
          for (const [name, props] of found) {
            if (counting && last.has(name) && last.get(name) !== props) w.__renders[name]!++;
            last.set(name, props);
          }
        },
      };
    },
    { targets, when },
  );
}

export async function renderCounts(page: Page): Promise<RenderCounts> {
  return page.evaluate(() => ({ ...(window as unknown as { __renders: RenderCounts }).__renders }));
}

/** Starts counting again from zero. */
export async function resetRenderCounts(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __renders: RenderCounts };
    for (const k of Object.keys(w.__renders)) w.__renders[k] = 0;
  });
}
