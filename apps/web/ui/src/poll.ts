import { useEffect, useRef, useState } from "react";

/**
 * Live state by polling the typed client (docs/decisions.md): `load` runs at once and
 * every `ms` while the page is visible; `refresh()` runs it now (after an action).
 */
export function usePoll<T>(load: () => Promise<T>, ms: number, deps: readonly unknown[]) {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const loadRef = useRef(load);
  loadRef.current = load;
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: deps are the caller's
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      if (document.visibilityState !== "hidden") {
        try {
          const value = await loadRef.current();
          if (alive) {
            setData(value);
            setError(undefined);
          }
        } catch (e) {
          if (alive) setError(e);
        }
      }
      if (alive) timer = setTimeout(run, ms);
    };
    void run();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [...deps, tick, ms]);
  return { data, error, refresh: () => setTick((n) => n + 1) };
}
