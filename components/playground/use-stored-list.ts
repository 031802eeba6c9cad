"use client";

import { useCallback, useEffect, useState } from "react";

/**
 * A short most-recent-first list kept in this browser (localStorage): recent compositions, recent
 * threads. `remember` puts an item first, drops its older copy and keeps at most `limit`.
 */
export function useStoredList<T>(key: string, limit: number, same: (a: T, b: T) => boolean = (a, b) => JSON.stringify(a) === JSON.stringify(b)) {
  const [items, setItems] = useState<T[]>([]);
  useEffect(() => {
    try {
      setItems(JSON.parse(localStorage.getItem(key) ?? "[]") as T[]);
    } catch {
      setItems([]);
    }
  }, [key]);
  const remember = useCallback(
    (item: T) => {
      setItems((previous) => {
        const next = [item, ...previous.filter((p) => !same(p, item))].slice(0, limit);
        localStorage.setItem(key, JSON.stringify(next));
        return next;
      });
    },
    [key, limit, same],
  );
  return [items, remember] as const;
}
