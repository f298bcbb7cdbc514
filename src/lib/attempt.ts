/** Runs `fn` and keeps its error as a value, for checks whose answer must wait its turn. */
export function attempt<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    return { ok: false, error };
  }
}
