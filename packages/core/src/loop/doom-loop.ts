import { Schema } from "effect"

/** How the doom-loop guard behaves. */
export interface DoomLoopOptions {
  /** Identical calls in a row that trigger the `doom_loop` ask; 0 or less disables the guard. */
  readonly threshold: number
  /** Tools never counted: by default those with the `repeats` trait (the todo tools), which models legitimately repeat. */
  readonly ignoredTools: ReadonlyArray<string>
}

/** The defaults: three identical calls in a row, none ignored (the loop adds the tools with the `repeats` trait). */
export const defaultDoomLoop: DoomLoopOptions = { threshold: 3, ignoredTools: [] }

/** The tools the guard ignores by default: those whose identical calls in a row are normal (`repeats`). */
export const repeatingTools = (tools: ReadonlyArray<{ readonly id: string; readonly repeats: boolean }>) =>
  tools.flatMap((tool) => (tool.repeats ? [tool.id] : []))

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
 *
 * Memory is fixed: only the current run matters for detection, so the guard keeps a counter of it and a window of the
 * last `threshold` calls (for the report), not the turn's whole history (a long turn makes thousands of calls).
 */
export class DoomLoopGuard {
  private readonly window: Array<RecordedCall> = []
  private run = 0
  constructor(readonly options: DoomLoopOptions = defaultDoomLoop) {}

  /** How many calls the guard remembers: never more than the threshold. */
  get size(): number {
    return this.window.length
  }

  record(tool: string, input: unknown): number {
    if (this.options.threshold <= 0 || this.options.ignoredTools.includes(tool)) return 0
    const call = { tool, input: canonicalJson(input) }
    const previous = this.window.at(-1)
    this.run = previous?.tool === call.tool && previous.input === call.input ? this.run + 1 : 1
    this.window.push(call)
    if (this.window.length > this.options.threshold) this.window.shift()
    return this.run
  }

  /** Whether a run of `count` identical calls should be asked about. */
  triggers(count: number): boolean {
    return this.options.threshold > 0 && count >= this.options.threshold
  }

  /** The last `n` calls, oldest first (for the error message); at most the threshold's worth. */
  last(n: number): ReadonlyArray<RecordedCall> {
    return n <= 0 ? [] : this.window.slice(-n)
  }
}

/** What a stopped doom loop tells the person: the repeated call, the threshold, and what to do. */
export interface DoomLoopReport {
  readonly tool: string
  readonly count: number
  readonly threshold: number
  /** The identical calls that made the run, oldest first (tool and canonical JSON input). */
  readonly calls: ReadonlyArray<RecordedCall>
  /** What the person can do next, in one or two sentences. */
  readonly suggestion: string
  /** The whole report as text: what happened, the repeated call, the suggestion. */
  readonly message: string
}

/** Input longer than this is cut in the report's text (the `calls` field keeps it whole). */
const SHOWN_INPUT = 300

/**
 * The report of a doom loop the person (or a run without a terminal) stopped: `count` identical calls of `tool`,
 * reaching `threshold`, the last of which are `calls`.
 */
export const doomLoopReport = (
  tool: string,
  count: number,
  threshold: number,
  calls: ReadonlyArray<RecordedCall>
): DoomLoopReport => {
  const suggestion =
    "Tell the model what it is missing or suggest another approach, then continue the session " +
    `(lathe run -c "…"). If repeating the call was right, raise doom_loop.threshold (now ${threshold}) in lathe.json, ` +
    `or add "${tool}" to doom_loop.ignored_tools.`
  const input = calls.at(-1)?.input ?? ""
  const shown = input.length > SHOWN_INPUT ? `${input.slice(0, SHOWN_INPUT)}…` : input
  const message =
    `Stopped a loop: the model called ${tool} ${count} times in a row with the same input (the doom-loop threshold ` +
    `is ${threshold}), and going on was not allowed.\nRepeated call (×${count}): ${tool} ${shown}\n${suggestion}`
  return { tool, count, threshold, calls, suggestion, message }
}

/**
 * The same tool with the same input was called `threshold` times or more in a row, and going on was not allowed (the
 * person said stop, or no one could be asked). `message` is the whole report for the person (see `doomLoopReport`).
 */
export class DoomLoopDetected extends Schema.TaggedError<DoomLoopDetected>()("DoomLoopDetected", {
  tool: Schema.String,
  count: Schema.Number,
  /** The doom-loop threshold in force (config `doom_loop.threshold`). */
  threshold: Schema.Number,
  /** The repeated calls, oldest first: tool and canonical JSON input. */
  calls: Schema.Array(Schema.Struct({ tool: Schema.String, input: Schema.String })),
  /** What the person can do next. */
  suggestion: Schema.String,
  message: Schema.String
}) {}
