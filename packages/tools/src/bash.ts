import { stat } from "node:fs/promises"
import type { ConfigInfo } from "@lathe/core"
import { configAdvice, launcherKeys, renderSnippet, type SecretSources, secretValues } from "@lathe/core"
import { PermissionDenied, PermissionRejected, Tool } from "@lathe/plugin"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { checkExternal, resolvePath } from "./paths.js"
import { detectSandbox, type SandboxDetector, type SandboxSettings, sandboxBlock } from "./sandbox.js"
import { blockText, chooseSandbox, describeSandbox } from "./sandbox-plan.js"
import { prepareSandboxedRun, type SandboxedRun } from "./sandbox-run.js"
import { commandEnv, runShell, type ShellResult } from "./shell.js"

/** Default command timeout: 2 minutes. */
export const DEFAULT_TIMEOUT_MS = 2 * 60 * 1000
/** Longest timeout a call may ask for: 10 minutes. */
export const MAX_TIMEOUT_MS = 10 * 60 * 1000
/** The live preview in `metadata.output` keeps the last this many characters. */
export const PREVIEW_CHARS = 30_000
/** Live previews are published at most this often. */
const PREVIEW_INTERVAL_MS = 100

/** `bash` arguments. */
export const BashInput = z.object({
  command: z.string().min(1).describe("The command line to run"),
  timeout: z
    .number()
    .int()
    .min(1)
    .max(MAX_TIMEOUT_MS)
    .optional()
    .describe(`Milliseconds before the command is killed (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS})`),
  workdir: z.string().optional().describe("The folder to run in (default: the working directory)"),
  description: z.string().min(1).describe("What the command does, in 5-10 words, e.g. 'Run the unit tests'")
})
/** `bash` arguments, parsed. */
export type BashInput = z.infer<typeof BashInput>

const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`

/** How the bash tool runs commands; the plugin fills it from config (`sandbox`, `shell.env.inherit`, provider keys). */
export interface BashOptions {
  /**
   * The sandbox settings. Without them commands run unsandboxed (for hosts that sandbox themselves and for
   * tests); the plugin passes the config's, whose default is `workspace-write` with the network closed.
   */
  readonly sandbox?: SandboxSettings
  /** Finds the machine's sandbox (default {@link detectSandbox}); tests pass one that finds none. */
  readonly detect?: SandboxDetector
  /** Variable names that pass to commands even though they look like secrets (`shell.env.inherit`). */
  readonly inherit?: ReadonlyArray<string>
  /** Secret values Lathe holds (see `secretValues`); a variable carrying one is dropped whatever its name. */
  readonly secrets?: ReadonlyArray<string>
  /** The environment commands start from (default: this process's), before secrets are dropped. */
  readonly baseEnv?: NodeJS.ProcessEnv
  /** The OS temp dir the sandbox leaves writable (default `os.tmpdir()`). */
  readonly tempDir?: string
  /** Lathe's truncation dir, writable in `workspace-write` (default: `tool-output` in the data dir). */
  readonly truncationDir?: string
  /** The person's home folder, never left writable by the sandbox (default `os.homedir()`). */
  readonly home?: string
  /** Told once, on the first call, when no sandbox is available and commands run under the permission rules alone. */
  readonly notice?: (message: string) => void
}

/**
 * Bash options from the merged config: its `sandbox` (default `workspace-write`, network closed), the names in
 * `shell.env.inherit`, the variables of `shell.env.set` over this process's environment, and the secret values to keep
 * out of commands: `secrets` when given (the plugin passes its context's, which include what the config's `{env:NAME}`
 * placeholders resolved to), else `secretValues` of the config alone (provider keys and headers, the store URL, MCP
 * servers' env and headers).
 */
export const bashOptionsFromConfig = (
  config: Pick<ConfigInfo, "sandbox" | "shell" | "provider"> & SecretSources,
  notice?: (message: string) => void,
  secrets: ReadonlyArray<string> = secretValues({ info: config })
): BashOptions => {
  const sandbox = config.sandbox ?? {}
  return {
    sandbox: {
      mode: sandbox.mode ?? "workspace-write",
      network: Array.isArray(sandbox.network) ? sandbox.network : sandbox.network === true,
      required: sandbox.required === true
    },
    inherit: config.shell?.env?.inherit ?? [],
    secrets,
    ...(config.shell?.env?.set ? { baseEnv: { ...startEnv(), ...config.shell.env.set } } : {}),
    ...(notice ? { notice } : {})
  }
}

/**
 * The environment Lathe was started with: this process's plus the provider keys the launcher handed over on a
 * descriptor (`launcherKeys`), so that scrubbing and `shell.env.inherit` decide about those as about any variable.
 */
const startEnv = (): NodeJS.ProcessEnv => ({ ...process.env, ...launcherKeys() })

const isPermissionError = (error: unknown): error is PermissionDenied | PermissionRejected =>
  error instanceof PermissionDenied || error instanceof PermissionRejected

/**
 * Builds the `bash` tool: asks `bash` with the raw command line (the permission layer analyses it), runs it
 * in its own process group with stdin closed and secrets dropped from its environment, inside the sandbox when
 * one is configured, streams the output to `metadata.output`, and kills the whole tree on timeout or abort. A
 * failing command is a normal result carrying its exit code, not an error. When the sandbox made it fail, the
 * result says so and rerunning it outside is asked as `sandbox_escape` (`requiresPerson`: never auto-approved);
 * a refusal fails the call with the sandbox's reason in the message.
 */
export const createBashTool = (options: BashOptions = {}) => {
  let noticed = false
  return Tool.define("bash", {
    description: loadDescription("bash"),
    parameters: BashInput,
    mutates: true,
    execute: async (args, ctx) => {
      const cwd = resolvePath(ctx, args.workdir ?? ".")
      const real = await checkExternal(ctx, cwd, "directory")
      const info = await stat(real).catch(() => undefined)
      if (!info?.isDirectory()) throw new Error(`workdir ${cwd} is not an existing folder.`)
      const settings = options.sandbox ?? { mode: "off" }
      const choice = await chooseSandbox(settings, options.detect ?? (() => detectSandbox()))
      if (choice.state === "missing" && !noticed) {
        noticed = true
        options.notice?.(
          `No sandbox for bash on this machine: ${choice.reason}. Commands run under the permission rules alone; ` +
            `merge ${renderSnippet(configAdvice.sandboxRequired())} into lathe.json to refuse them instead.`
        )
      }
      await ctx.ask({
        permission: "bash",
        patterns: [args.command],
        metadata: { command: args.command, description: args.description, workdir: cwd }
      })
      const timeoutMs = args.timeout ?? DEFAULT_TIMEOUT_MS
      const { env } = commandEnv(options.baseEnv ?? startEnv(), {
        inherit: options.inherit ?? [],
        secrets: options.secrets ?? []
      })
      let preview = ""
      let last = 0
      let pending: NodeJS.Timeout | undefined
      const publish = () => {
        pending = undefined
        last = performance.now()
        ctx.metadata({ metadata: { output: preview, description: args.description } })
      }
      const run = (sandboxed?: Pick<SandboxedRun, "wrap" | "extraInputs" | "env" | "onMessage">) => {
        preview = ""
        return runShell({
          command: args.command,
          cwd: real,
          timeoutMs,
          signal: ctx.abort,
          env: sandboxed ? { ...env, ...sandboxed.env } : env,
          ...(sandboxed ? { wrap: sandboxed.wrap, extraInputs: sandboxed.extraInputs } : {}),
          ...(sandboxed?.onMessage ? { onMessage: sandboxed.onMessage } : {}),
          onOutput: (chunk) => {
            preview = (preview + chunk).slice(-PREVIEW_CHARS)
            if (pending) return
            const wait = PREVIEW_INTERVAL_MS - (performance.now() - last)
            if (wait <= 0) publish()
            else pending = setTimeout(publish, wait)
          }
        })
      }
      const notes: Array<string> = []
      let result: ShellResult
      let escaped = false
      // The preview timer goes with the call however it ends (a rejected rerun throws): a preview published after
      // the call's result would be a stray update of a finished call.
      try {
        if (choice.state !== "on") result = await run()
        else {
          const runSandboxed = async () => {
            const sandboxed = prepareSandboxedRun(settings, choice, {
              root: ctx.root,
              cwd: real,
              tempDir: options.tempDir,
              truncationDir: options.truncationDir,
              home: options.home,
              env
            })
            try {
              return { plan: sandboxed.plan, result: await run(sandboxed) }
            } finally {
              notes.push(...(await sandboxed.after()))
            }
          }
          let sandboxed = await runSandboxed()
          // bwrap failed to set up (a path it mounts over vanished meanwhile, e.g. a socket): the command never ran.
          if (sandboxed.result.exitCode === 1 && /^bwrap: /.test(sandboxed.result.output))
            sandboxed = await runSandboxed()
          const plan = sandboxed.plan
          result = sandboxed.result
          const block = result.aborted ? undefined : sandboxBlock(result, plan)
          if (block) {
            const why =
              `The command failed inside ${describeSandbox(choice.kind, plan)}: ${blockText(block, plan)}. ` +
              "Rerunning it outside the sandbox needs the user's approval (sandbox_escape)."
            try {
              await ctx.ask({
                permission: "sandbox_escape",
                patterns: [args.command],
                requiresPerson: true,
                metadata: {
                  command: args.command,
                  description: args.description,
                  workdir: cwd,
                  reason: why,
                  output: result.output.slice(-2000),
                  requiresPerson: true
                }
              })
            } catch (error) {
              if (!isPermissionError(error)) throw error
              const output = result.output.trim().slice(-2000)
              const message = `${why}\n${output === "" ? "" : `Its output ended with:\n${output}\n`}${error.message}`
              throw error instanceof PermissionRejected
                ? new PermissionRejected({
                    permission: error.permission,
                    patterns: error.patterns,
                    ...(error.feedback === undefined ? {} : { feedback: error.feedback }),
                    message
                  })
                : new PermissionDenied({
                    permission: error.permission,
                    pattern: error.pattern,
                    ...(error.rule === undefined ? {} : { rule: error.rule }),
                    message
                  })
            }
            escaped = true
            notes.push(`${why} The user approved; this is the output of the rerun outside the sandbox.`)
            result = await run()
          }
        }
      } finally {
        if (pending) clearTimeout(pending)
      }
      if (result.overflowed) notes.push("Output beyond 32 MB was discarded.")
      if (result.timedOut)
        notes.push(`The command timed out after ${seconds(timeoutMs)} and was killed with its child processes.`)
      if (result.aborted) notes.push("The command was aborted and killed with its child processes.")
      const status =
        result.exitCode !== null ? `exit code ${result.exitCode}` : `killed by ${result.signal ?? "a signal"}`
      notes.push(`(${status}, ${seconds(result.durationMs)})`)
      const body = result.output === "" ? "(no output)" : result.output.replace(/\n$/, "")
      return {
        title: args.description,
        output: `${body}\n\n${notes.join("\n")}`,
        metadata: {
          description: args.description,
          exitCode: result.exitCode,
          signal: result.signal,
          timedOut: result.timedOut,
          durationMs: result.durationMs,
          sandbox: choice.state === "on" ? choice.kind : choice.state === "missing" ? "none" : "off",
          ...(escaped ? { sandboxEscaped: true } : {})
        }
      }
    }
  })
}
