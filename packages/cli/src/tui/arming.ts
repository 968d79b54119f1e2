/** A first Ctrl+C (quit) or Esc (interrupt a tool that may change files), waiting for the second press. */
export interface Armed {
  readonly kind: "ctrl-c" | "esc"
  /** When it was armed (ms since the epoch). */
  readonly at: number
}

/** How long a first Ctrl+C waits for the second. */
export const ARM_MS = 2_000

/**
 * Whether `armed` has run out at `now`. A first Ctrl+C waits {@link ARM_MS}. A first Esc waits as long as a tool that
 * may change files is still `running` (the person may read the hint, think, then press Esc again), and
 * {@link ARM_MS} once none is.
 */
export const armExpired = (armed: Armed, now: number, running: boolean): boolean =>
  armed.kind === "esc" && running ? false : now - armed.at >= ARM_MS
