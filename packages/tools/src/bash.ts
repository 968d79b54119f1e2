import { stat } from "node:fs/promises"
import { type HostTerminal, PermissionDenied, PermissionRejected, renderSnippet, Tool } from "@lathe/plugin"
import { z } from "zod"
import { toolsConfigAdvice } from "./config-advice.js"
import { loadDescription } from "./description.js"
import { checkExternal, resolvePath } from "./paths.js"
import { detectSandbox, type SandboxDetector, type SandboxMode, type SandboxSettings, sandboxBlock } from "./sandbox.js"
import { blockText, chooseSandbox, describeSandbox } from "./sandbox-plan.js"
import { prepareSandboxedRun, type SandboxedRun } from "./sandbox-run.js"
import { commandEnv, runShell, type ShellResult } from "./shell.js"
import { runInTerminal } from "./terminal-run.js"
import { toolSchema } from "./tool-schemas.js"

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

/** The environment commands start from, read at each call (default: this process's). */
export type StartEnv = () => Readonly<Record<string, string | undefined>>

/**
 * How the bash tool runs commands; the plugin fills it from config (`sandbox`, `shell.env`) and from its context (the
 * secrets, the provider key variables, the truncation dir).
 */
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
  /** Secret values Lathe holds (`ctx.secrets`); a variable carrying one is dropped whatever its name. */
  readonly secrets?: ReadonlyArray<string>
  /** The host's provider key variables (`ctx.secretNames`): dropped whatever they hold, unless in `inherit`. */
  readonly secretNames?: ReadonlyArray<string>
  /** The environment commands start from, before secrets are dropped (default: `startEnv`'s, read at each call). */
  readonly baseEnv?: NodeJS.ProcessEnv
  /**
   * The environment Lathe was started with, read at each call when `baseEnv` is not given (default: this process's).
   * The CLI adds the provider keys its launcher handed over privately, so that scrubbing and `shell.env.inherit`
   * decide about those as about any variable.
   */
  readonly startEnv?: StartEnv
  /** The OS temp dir the sandbox leaves writable (default `os.tmpdir()`). */
  readonly tempDir?: string
  /** Lathe's truncation dir (`ctx.truncationDir`), writable in `workspace-write` (default: none writable). */
  readonly truncationDir?: string
  /** The person's home folder, never left writable by the sandbox (default `os.homedir()`). */
  readonly home?: string
  /** Told once, on the first call, when no sandbox is available and commands run under the permission rules alone. */
  readonly notice?: (message: string) => void
  /**
   * The host's terminal (`ctx.terminal`: an editor's): commands run there, sandbox-wrapped as here, instead of in a
   * process of Lathe's. A sandbox with a network allow-list talks to Lathe over an IPC channel while it runs, which
   * no terminal carries: those commands still run here.
   */
  readonly terminal?: HostTerminal
}

/** The sections of the merged config bash reads (the host's config schema outputs this shape). */
export interface BashConfig {
  /** The `sandbox` section, its string shorthand expanded (`"required"` is `{ required: true }`). */
  readonly sandbox?:
    | {
        readonly mode?: SandboxMode | undefined
        readonly network?: boolean | ReadonlyArray<string> | undefined
        readonly required?: boolean | undefined
      }
    | undefined
  readonly shell?:
    | {
        readonly env?:
          | {
              readonly inherit?: ReadonlyArray<string> | undefined
              readonly set?: Readonly<Record<string, string>> | undefined
            }
          | undefined
      }
    | undefined
}

/** What bash takes from its host besides config: the plugin passes its context's values. */
export interface BashHost {
  /** Told once when no sandbox is available (the plugin logs it as a warning). */
  readonly notice?: ((message: string) => void) | undefined
  /** The secret values to keep out of commands (`ctx.secrets`; default none). */
  readonly secrets?: ReadonlyArray<string> | undefined
  /** The host's provider key variables (`ctx.secretNames`; default none). */
  readonly secretNames?: ReadonlyArray<string> | undefined
  /** Lathe's truncation dir (`ctx.truncationDir`), writable in the `workspace-write` sandbox. */
  readonly truncationDir?: string | undefined
  /** The environment Lathe was started with (default: this process's), read at each call. */
  readonly startEnv?: StartEnv | undefined
  /** The host's terminal commands run in (`ctx.terminal`; default: Lathe runs them). */
  readonly terminal?: HostTerminal | undefined
}

/**
 * Bash options from the merged config: its `sandbox` (default `workspace-write`, network closed), the names in
 * `shell.env.inherit`, the variables of `shell.env.set` over the start environment, and from the host the secret
 * values and provider key variables to keep out of commands (the plugin passes its context's `secrets`, which include
 * what the config's `{env:NAME}` placeholders resolved to, and `secretNames`).
 */
export const bashOptionsFromConfig = (config: BashConfig, host: BashHost = {}): BashOptions => {
  const sandbox = config.sandbox ?? {}
  const set = config.shell?.env?.set
  return {
    sandbox: {
      mode: sandbox.mode ?? "workspace-write",
      network: Array.isArray(sandbox.network) ? sandbox.network : sandbox.network === true,
      required: sandbox.required === true
    },
    inherit: config.shell?.env?.inherit ?? [],
    secrets: host.secrets ?? [],
    secretNames: host.secretNames ?? [],
    ...(set ? { baseEnv: { ...(host.startEnv ?? processEnv)(), ...set } } : {}),
    ...(host.startEnv ? { startEnv: host.startEnv } : {}),
    ...(host.truncationDir === undefined ? {} : { truncationDir: host.truncationDir }),
    ...(host.notice ? { notice: host.notice } : {}),
    ...(host.terminal ? { terminal: host.terminal } : {})
  }
}

/** This process's environment, as it is at the call. */
const processEnv: StartEnv = () => process.env

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
    jsonSchema: toolSchema("bash"),
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
            `merge ${renderSnippet(toolsConfigAdvice.sandboxRequired())} into lathe.json to refuse them instead.`
        )
      }
      await ctx.ask({
        permission: "bash",
        patterns: [args.command],
        metadata: { command: args.command, description: args.description, workdir: cwd }
      })
      const timeoutMs = args.timeout ?? DEFAULT_TIMEOUT_MS
      const { env } = commandEnv(options.baseEnv ?? (options.startEnv ?? processEnv)(), {
        inherit: options.inherit ?? [],
        secrets: options.secrets ?? [],
        names: options.secretNames ?? []
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
        const runEnv = sandboxed ? { ...env, ...sandboxed.env } : env
        if (options.terminal && !sandboxed?.onMessage)
          return runInTerminal(options.terminal, {
            sessionID: ctx.sessionID,
            callID: ctx.callID,
            command: args.command,
            cwd: real,
            timeoutMs,
            signal: ctx.abort,
            env: runEnv,
            ...(sandboxed ? { wrap: sandboxed.wrap, extraInputs: sandboxed.extraInputs } : {})
          })
        return runShell({
          command: args.command,
          cwd: real,
          timeoutMs,
          signal: ctx.abort,
          env: runEnv,
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
