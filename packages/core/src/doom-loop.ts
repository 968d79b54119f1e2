/** How the doom-loop guard behaves. */
export interface DoomLoopOptions {
  /** Identical calls in a row that trigger the `doom_loop` ask; 0 or less disables the guard. */
  readonly threshold: number
  /** Tools never counted (by default the todo tools, which models legitimately repeat). */
  readonly ignoredTools: ReadonlyArray<string>
}

/** The defaults: three identical calls in a row, todo tools ignored. */
export const defaultDoomLoop: DoomLoopOptions = { threshold: 3, ignoredTools: ["todowrite", "todoread"] }

/** JSON with object keys sorted at every depth, so `{a,b}` and `{b,a}` compare equal. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner
  ) ?? "undefined"

/** One call as the guard remembers it. */
export interface RecordedCall {
  readonly tool: string
  readonly input: string
}

/**
 * Watches the calls of one turn, in the order the model made them. `record` returns how many identical calls (same
 * tool, same canonical input) end the sequence, or 0 when the call does not count (guard off, or an ignored tool).
 */
export class DoomLoopGuard {
  private readonly calls: Array<RecordedCall> = []
  constructor(readonly options: DoomLoopOptions = defaultDoomLoop) {}

  record(tool: string, input: unknown): number {
    if (this.options.threshold <= 0 || this.options.ignoredTools.includes(tool)) return 0
    const call = { tool, input: canonicalJson(input) }
    this.calls.push(call)
    let run = 0
    for (let i = this.calls.length - 1; i >= 0; i--) {
      const previous = this.calls[i]
      if (previous?.tool !== call.tool || previous.input !== call.input) break
      run++
    }
    return run
  }

  /** Whether a run of `count` identical calls should be asked about. */
  triggers(count: number): boolean {
    return this.options.threshold > 0 && count >= this.options.threshold
  }

  /** The last `n` calls, oldest first (for the error message). */
  last(n: number): ReadonlyArray<RecordedCall> {
    return this.calls.slice(-n)
  }
}
