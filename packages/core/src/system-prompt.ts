import { readFileSync, realpathSync, statSync } from "node:fs"
import { glob, stat } from "node:fs/promises"
import { dirname, isAbsolute, join, relative, resolve } from "node:path"
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import type { AgentInfo } from "./agent.js"
import { Bus } from "./bus.js"
import { Config } from "./config.js"
import { isWithin } from "./config-load.js"
import { gitOutput, prefetchGit, startupGitCommands } from "./git-prefetch.js"
import type { ModelInfo } from "./llm.js"
import { Paths } from "./paths.js"
import type { Ruleset } from "./permission-next.js"
import { Plugins } from "./plugins.js"
import { basePrompt } from "./prompts.js"

/**
 * How long the first request waits for `git status` past the moment it needs the count of changed files (a huge or
 * cold repository can take seconds; the model can run it itself).
 */
const STATUS_BUDGET = Duration.seconds(2)

/** What the system prompt is built for. */
export interface SystemPromptInput {
  readonly sessionID: string
  readonly agent: AgentInfo
  readonly model: ModelInfo
  /** The step's effective ruleset (passed to the `system.transform` hook); empty when not given. */
  readonly ruleset?: Ruleset
}

/**
 * Assembles the system prompt of a step: the provider prompt for the model's family, the environment (cwd, git
 * branch and state, platform, date), the rules files (`AGENTS.md`, else `CLAUDE.md`, else `CONTEXT.md`, from cwd
 * up to the root; the global `~/.config/lathe/AGENTS.md` and `~/.claude/CLAUDE.md`; config `instructions` globs),
 * the agent's prompt, then the `system.transform` hook. The environment and the list of rules files are read once
 * per session; a rules file is re-read only when its mtime or size changes (so an edit made mid-turn, by a tool or
 * by the person, reaches the next step), and a step costs one synchronous `stat` per rules file.
 *
 * In a project that is not trusted, a rules file inside the project (found walking up, or matched by a relative
 * `instructions` entry) is read only while its real path is inside the project too: a committed symlink to
 * `~/.ssh/id_rsa` is skipped with a notice (one `realpath` per such file per step). Files outside the project come
 * only from the person's own config (an untrusted file's outside entries are dropped when it is loaded) and are read.
 */
export class SystemPrompt extends Context.Service<
  SystemPrompt,
  {
    /** The system messages, in order. */
    readonly build: (input: SystemPromptInput) => Effect.Effect<ReadonlyArray<string>>
    /** The rules files' text alone, for the compaction summariser (so a summary never forgets the rules). */
    readonly rules: (sessionID: string) => Effect.Effect<ReadonlyArray<string>>
  }
>()("@lathe/core/SystemPrompt") {
  /** The real assembler (requires Paths, Config, Plugins and Bus, for the notice of a skipped rules file). */
  static readonly layer = Layer.effect(
    SystemPrompt,
    Effect.gen(function* () {
      const paths = yield* Paths
      const config = yield* Config
      const plugins = yield* Plugins
      const bus = yield* Bus
      const environments = new Map<string, string>()
      // Started when the layer is built, or taken from the CLI's prefetch (started before the modules loaded), so on
      // a big repository `git status` runs while the rest of start-up does. The branch comes from its own cheap
      // question: a status that is slow (a huge or cold repository) or fails never makes the prompt say the folder is
      // not a repository. Not a repository: the branch is undefined. Without the CLI's prefetch, both questions still
      // go to one shell (each process start costs the main thread a few milliseconds).
      prefetchGit(paths.directory, [startupGitCommands.branch, startupGitCommands.status])
      const gitBranch = gitOutput(paths.directory, startupGitCommands.branch)
      const gitStatus = gitOutput(paths.directory, startupGitCommands.status)
      const files = new Map<string, { mtime: number; size: number; text: string }>()

      // The person's own rules files, read wherever they are (even when the project is the home folder).
      const own = new Set([join(paths.config, "AGENTS.md"), join(paths.home, ".claude", "CLAUDE.md")])
      let realRoot: string | undefined
      const skipped = new Set<string>()
      const notices: Array<string> = []
      /** Says once per file that it was skipped (published by `rules`); the person reads it, the model never does. */
      const skip = (file: string, real: string) => {
        if (skipped.has(file)) return
        skipped.add(file)
        notices.push(
          `Ignored from untrusted ${paths.root}: rules file ${file} (its real path ${real} is outside the ` +
            `project). Run \`lathe trust\` in ${paths.root} to trust this folder.`
        )
      }
      const publishNotices = Effect.suspend(() =>
        Effect.forEach(notices.splice(0), (message) => bus.publish({ type: "notice", level: "warn", message }), {
          discard: true
        })
      )
      /**
       * Whether a rules file may be read: always in a trusted project and for files outside the project (they come
       * from the person's config); otherwise only when its real path is inside the project. Synchronous (one
       * `realpath` syscall), as it runs for such files on every step: a file replaced by a symlink mid-session counts.
       */
      const readable = (file: string): boolean => {
        if (config.trusted || own.has(file) || !isWithin(paths.root, file)) return true
        let real: string
        try {
          realRoot ??= realpathSync.native(paths.root)
          real = realpathSync.native(file)
        } catch {
          return false
        }
        if (isWithin(realRoot, real)) return true
        skip(file, real)
        return false
      }

      /** A rules file's text, re-read only when its mtime or size changed; undefined when it is not a file. */
      const readCached = (file: string): string | undefined => {
        // Synchronous on purpose: a `stat` of a local file costs microseconds, a round trip through the thread pool
        // about a hundred, and this runs for every rules file on every step.
        const info = statSync(file, { throwIfNoEntry: false })
        if (!info?.isFile()) return undefined
        const cached = files.get(file)
        if (cached && cached.mtime === info.mtimeMs && cached.size === info.size) return cached.text
        let text: string
        try {
          text = readFileSync(file, "utf8")
        } catch {
          return undefined
        }
        files.set(file, { mtime: info.mtimeMs, size: info.size, text })
        return text
      }

      const rulesFiles = async (): Promise<Array<string>> => {
        const dirs: Array<string> = []
        for (let dir = paths.directory; ; dir = dirname(dir)) {
          dirs.push(dir)
          if (dir === paths.root || dirname(dir) === dir || relative(paths.root, dir).startsWith("..")) break
        }
        const found: Array<string> = []
        const rootFirst = [...dirs].reverse()
        for (const name of ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"]) {
          for (const dir of rootFirst) {
            const file = join(dir, name)
            if ((await stat(file).catch(() => undefined))?.isFile()) found.push(file)
          }
          if (found.length > 0) break // the first name that exists anywhere wins
        }
        found.push(...own)
        for (const pattern of config.info.instructions) {
          const expanded = pattern.startsWith("~/") ? join(paths.home, pattern.slice(2)) : pattern
          const absolute = isAbsolute(expanded) ? expanded : resolve(paths.root, expanded)
          if (!/[*?[{]/.test(absolute)) found.push(absolute)
          else for await (const match of glob(absolute)) found.push(match)
        }
        return [...new Set(found)]
      }

      // Which rules files exist is looked up once per session; their contents are re-read when their mtime changes.
      const discovering = new Map<string, Promise<Array<string>>>()
      const discovered = new Map<string, ReadonlyArray<string>>()
      const rulesText = (list: ReadonlyArray<string>): Array<string> => {
        const out: Array<string> = []
        for (const file of list) {
          const text = readable(file) ? readCached(file)?.trim() : undefined
          if (text) out.push(`Instructions from ${file}:\n${text}`)
        }
        return out
      }
      const rules = Effect.fn("SystemPrompt.rules")(function* (sessionID: string) {
        let list = discovered.get(sessionID)
        if (!list) {
          let pending = discovering.get(sessionID)
          if (!pending) {
            pending = rulesFiles()
            discovering.set(sessionID, pending)
          }
          const found = yield* Effect.promise(() => pending)
          discovered.set(sessionID, found)
          discovering.delete(sessionID)
          list = found
        }
        const text = rulesText(list)
        yield* publishNotices
        return text
      })

      const environment = Effect.fnUntraced(function* (sessionID: string) {
        const cached = environments.get(sessionID)
        if (cached) return cached
        const branch = yield* Effect.promise(() => gitBranch)
        // The first request waits for the count at most STATUS_BUDGET past the moment it needs it (outside a
        // repository git fails at once).
        const status = yield* Effect.promise(() => gitStatus).pipe(
          Effect.map((out): ChangedFiles => (out === undefined ? { kind: "failed" } : countChanged(out))),
          Effect.timeoutOption(STATUS_BUDGET),
          Effect.map(Option.getOrElse((): ChangedFiles => ({ kind: "late" })))
        )
        const date = new Date(yield* Clock.currentTimeMillis).toDateString()
        // A git older than 2.22 has no `branch --show-current`: a status that answered still says it is a repository.
        const repository = branch !== undefined || status.kind === "counted"
        const text = environmentText({
          directory: paths.directory,
          root: paths.root,
          branch: repository ? (branch ?? "unknown") : undefined,
          status,
          date
        })
        environments.set(sessionID, text)
        return text
      })

      const build = Effect.fn("SystemPrompt.build")(function* (input: SystemPromptInput) {
        const system = [
          basePrompt(input.model.providerID, input.model.modelID),
          yield* environment(input.sessionID),
          ...(yield* rules(input.sessionID)),
          ...(input.agent.prompt ? [input.agent.prompt] : [])
        ]
        const output = yield* plugins.trigger(
          "system.transform",
          {
            sessionID: input.sessionID,
            agent: input.agent.name,
            model: { providerID: input.model.providerID, modelID: input.model.modelID },
            permission: input.ruleset ?? []
          },
          { system }
        )
        return output.system
      })

      return SystemPrompt.of({ build, rules })
    })
  )
}

/** What `git status` said of the uncommitted files (changed and untracked): how many, or why it did not say. */
type ChangedFiles =
  | { readonly kind: "counted"; readonly files: number }
  | { readonly kind: "failed" }
  | { readonly kind: "late" }

/** The changed files in `git status --porcelain=v2` output (one line each; header lines start with `#`). */
const countChanged = (out: string): ChangedFiles => ({
  kind: "counted",
  files: out.split("\n").filter((line) => line.length > 0 && !line.startsWith("#")).length
})

/**
 * The environment block of the system prompt. `branch` is undefined outside a git repository, empty for a detached
 * head (which the prompt calls HEAD, as `git rev-parse --abbrev-ref HEAD` does) and "unknown" when git could not say.
 */
const environmentText = (env: {
  readonly directory: string
  readonly root: string
  readonly branch: string | undefined
  readonly status: ChangedFiles | undefined
  readonly date: string
}): string => {
  const changes = (status: ChangedFiles | undefined): string => {
    if (status?.kind === "counted")
      return status.files === 0 ? "none" : `${status.files} file${status.files === 1 ? "" : "s"}`
    return status?.kind === "late"
      ? `not counted (git status did not answer within ${Duration.format(STATUS_BUDGET)}; run it to see them)`
      : "not counted (git status failed; run it to see why)"
  }
  return [
    "Here is useful information about the environment you are running in:",
    "<env>",
    `Working directory: ${env.directory}`,
    `Project root: ${env.root}`,
    `Is the directory a git repository: ${env.branch !== undefined ? "yes" : "no"}`,
    ...(env.branch !== undefined
      ? [`Git branch: ${env.branch || "HEAD"}`, `Uncommitted changes: ${changes(env.status)}`]
      : []),
    `Platform: ${process.platform}`,
    `Today's date: ${env.date}`,
    "</env>"
  ].join("\n")
}
