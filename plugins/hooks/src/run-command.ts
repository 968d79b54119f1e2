import { runProgram } from "@lathe/plugin"
import { z } from "zod"

/** What a hook may print on stdout (exit 0) to decide: Claude Code's JSON, unknown keys ignored. */
export const HookJson = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  systemMessage: z.string().optional(),
  decision: z.string().optional(),
  reason: z.string().optional(),
  hookSpecificOutput: z
    .looseObject({
      permissionDecision: z.string().optional(),
      permissionDecisionReason: z.string().optional(),
      updatedInput: z.record(z.string(), z.unknown()).optional(),
      additionalContext: z.string().optional()
    })
    .optional()
})
/** A hook's JSON answer. */
export type HookJson = z.infer<typeof HookJson>

/** How one hook ended, read with Claude Code's contract. */
export type HookResult =
  /** Exit 0: `json` when stdout was a JSON object, else `stdout` is plain text. */
  | { readonly kind: "ok"; readonly json?: HookJson; readonly stdout: string }
  /** Exit 2: a blocking error; `stderr` is the reason. */
  | { readonly kind: "block"; readonly stderr: string }
  /** Anything else (another exit code, a signal, the time limit, a program that would not start): non-blocking. */
  | { readonly kind: "error"; readonly message: string; readonly timedOut?: boolean }

/** How to run one hook command. */
export interface RunHookOptions {
  readonly command: string
  /** The JSON sent on stdin. */
  readonly input: Readonly<Record<string, unknown>>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
}

/** The first lines of a program's stderr, for a notice. */
const firstLines = (text: string, count = 3): string => {
  const lines = text.trim().split("\n").slice(0, count)
  return lines.join("\n")
}

/** Reads stdout as a JSON answer when it is one (an object); otherwise it is plain text. */
const readJson = (stdout: string): HookJson | undefined => {
  const text = stdout.trim()
  if (!text.startsWith("{")) return undefined
  try {
    const parsed = HookJson.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

/**
 * Runs a hook command with bash (`bash -c <command>`) in its own process group, the input JSON on stdin. At the time
 * limit the whole group is killed (the kit's `runProgram`). Never rejects: every failure is an `error` result.
 */
export const runHookCommand = async (options: RunHookOptions): Promise<HookResult> => {
  const label = `\`${options.command}\``
  try {
    const run = await runProgram("bash", ["-c", options.command], {
      cwd: options.cwd,
      env: options.env,
      timeoutMs: options.timeoutMs,
      input: JSON.stringify(options.input)
    })
    if (run.timedOut)
      return {
        kind: "error",
        message: `${label} did not finish within ${options.timeoutMs / 1000} s and was stopped (with everything it started)`,
        timedOut: true
      }
    if (run.exitCode === 0) {
      const json = readJson(run.stdout)
      return json === undefined ? { kind: "ok", stdout: run.stdout } : { kind: "ok", json, stdout: run.stdout }
    }
    if (run.exitCode === 2) return { kind: "block", stderr: run.stderr.trim() }
    const how = run.exitCode === null ? `was killed by ${run.signal ?? "a signal"}` : `exited with ${run.exitCode}`
    const said = firstLines(run.stderr)
    return { kind: "error", message: `${label} ${how}${said ? `: ${said}` : ""}` }
  } catch (error) {
    return {
      kind: "error",
      message: `${label} could not be started: ${error instanceof Error ? error.message : String(error)}`
    }
  }
}
