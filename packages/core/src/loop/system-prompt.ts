import { isAbsolute, join, relative, resolve } from "node:path"
import type { AgentInfo, Ruleset } from "@lathe/plugin"
import type { MessageWithParts } from "@lathe/plugin/schema"
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import { Config } from "../config/config.js"
import { Paths } from "../config/paths.js"
import {
  folderRulesFiles,
  type MAX_RULES_FILE_BYTES,
  type MAX_RULES_TOTAL_BYTES,
  nestedRulesFolders,
  type StartupRulesFile
} from "../config/rules-files.js"
import { Bus } from "../contracts/bus.js"
import { Plugins } from "../plugin-host/plugins.js"
import { gitOutput, prefetchGit, startupGitCommands } from "../process/git-prefetch.js"
import { SessionStore } from "../store/session-store.js"
import { basePrompt } from "./prompts.js"
import { makeRulesReader } from "./rules-reader.js"

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

/** The SystemPrompt's shape. */
export interface SystemPromptService {
  /** The system messages, in order. */
  readonly build: (input: SystemPromptInput) => Effect.Effect<ReadonlyArray<string>>
  /**
   * The rules files' text alone, nested ones loaded so far included, for the compaction summariser (so a summary
   * never forgets the rules).
   */
  readonly rules: (sessionID: string) => Effect.Effect<ReadonlyArray<string>>
  /**
   * The rules of the folders below the working directory that `files` (absolute, `~/…`, or relative to the working
   * directory) are in and that this session has not seen yet, shallowest folder first, each labelled with its path;
   * empty when there is nothing new. Publishes a `rules: <path>` notice for each file added.
   */
  readonly nested: (sessionID: string, files: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
}

/**
 * Assembles the system prompt of a step: the provider prompt for the model's family, the environment (cwd, git
 * branch and state, platform, date), the rules files (`AGENTS.md`, else `CLAUDE.md`, else `CONTEXT.md`, each
 * followed by its `.local.md` sibling when there is one, from cwd up to the root; the global `~/.config/lathe/AGENTS.md` and `~/.claude/CLAUDE.md`; config `instructions` globs),
 * the agent's prompt, then the `system.transform` hook. The environment and the list of rules files are read once
 * per session; a rules file is re-read only when its mtime or size changes (so an edit made mid-turn, by a tool or
 * by the person, reaches the next step), and a step costs one synchronous `stat` per rules file.
 *
 * In a project that is not trusted, every rules file is read only while its real path is inside the project, decided
 * per file at read time (one `realpath` per file per step), whatever the pattern that matched it spelled (`..`,
 * `[.][.]`, `.{.,x}`, a symlinked folder, an absolute path, `~`): a committed symlink to `~/.ssh/id_rsa` or an
 * `instructions` glob that reaches the parent folder is skipped with a notice. The only exceptions are the person's
 * own: their rules files and what their own config's `instructions` match outside the project.
 *
 * A rules file's `@path` lines pull in other files (see `expandImports`), sent after it; in an untrusted project an
 * import is followed only while its real path is inside the project, except from the person's own files.
 *
 * Sizes are capped: at most {@link MAX_RULES_FILE_BYTES} of each file (only that much is read) and
 * {@link MAX_RULES_TOTAL_BYTES} in all per call; what is cut is said in the text and in a notice naming the file.
 *
 * Rules files in folders below the working directory (nested `AGENTS.md`) are not part of the system prompt: `nested`
 * hands them out once per session when a tool first touches a file under them, for the loop to add as a synthetic
 * part.
 */ export class SystemPrompt extends Context.Service<SystemPrompt, SystemPromptService>()("@lathe/core/SystemPrompt") {
  /**
   * The real assembler (requires Paths, Config, Plugins, Bus for the notice of a skipped rules file, and SessionStore
   * for the nested rules a resumed session was already given).
   */
  static readonly layer = Layer.effect(
    SystemPrompt,
    Effect.suspend(() => makeSystemPrompt)
  )
}

/** The real assembler over the services bound here, once; `rules-reader.ts` reads the rules files. */
const makeSystemPrompt = Effect.gen(function* () {
  const paths = yield* Paths
  const config = yield* Config
  const plugins = yield* Plugins
  const bus = yield* Bus
  const store = yield* SessionStore
  const environments = new Map<string, string>()
  // Started when the layer is built, or taken from the CLI's prefetch (started before the modules loaded), so on
  // a big repository `git status` runs while the rest of start-up does. The branch comes from its own cheap
  // question: a status that is slow (a huge or cold repository) or fails never makes the prompt say the folder is
  // not a repository. Not a repository: the branch is undefined. Without the CLI's prefetch, both questions still
  // go to one shell (each process start costs the main thread a few milliseconds).
  prefetchGit(paths.directory, [startupGitCommands.branch, startupGitCommands.status])
  const gitBranch = gitOutput(paths.directory, startupGitCommands.branch)
  const gitStatus = gitOutput(paths.directory, startupGitCommands.status)
  const reader = makeRulesReader(paths, config)
  const { notices } = reader
  const publishNotices = Effect.suspend(() =>
    Effect.forEach(notices.splice(0), (notice) => bus.publish({ type: "notice", ...notice }), { discard: true })
  )

  // Which rules files exist is looked up once per session; their contents are re-read when their mtime changes.
  const discovering = new Map<string, Promise<Array<StartupRulesFile>>>()
  const discovered = new Map<string, ReadonlyArray<string>>()
  /**
   * The nested rules files each session has been given, in the order they were added. A session this process has
   * not seen yet (resumed by another process) starts from the synthetic parts already in its history.
   */
  const nestedLoaded = new Map<string, Promise<Array<string>>>()
  const loadedFor = (sessionID: string) => {
    let pending = nestedLoaded.get(sessionID)
    if (!pending) {
      pending = Effect.runPromise(
        store.messages(sessionID).pipe(
          Effect.map(nestedInHistory),
          Effect.orElseSucceed((): Array<string> => [])
        )
      )
      nestedLoaded.set(sessionID, pending)
    }
    return Effect.promise(() => pending)
  }
  const startup = Effect.fnUntraced(function* (sessionID: string) {
    const list = discovered.get(sessionID)
    if (list) return list
    let pending = discovering.get(sessionID)
    if (!pending) {
      pending = reader.find()
      discovering.set(sessionID, pending)
    }
    const found = (yield* Effect.promise(() => pending)).map((rules) => rules.file)
    discovered.set(sessionID, found)
    discovering.delete(sessionID)
    return found
  })
  /** The system prompt's rules: the startup files only, so the prompt stays the same all session long. */
  const startupRules = Effect.fnUntraced(function* (sessionID: string) {
    const text = reader.text(yield* startup(sessionID))
    yield* publishNotices
    return text
  })
  const rules = Effect.fn("SystemPrompt.rules")(function* (sessionID: string) {
    const text = [...reader.text(yield* startup(sessionID)), ...reader.text(yield* loadedFor(sessionID), true)]
    yield* publishNotices
    return text
  })
  const nested = Effect.fn("SystemPrompt.nested")(function* (sessionID: string, files: ReadonlyArray<string>) {
    const base = new Set(yield* startup(sessionID))
    const loaded = yield* loadedFor(sessionID)
    const out: Array<string> = []
    for (const touched of files) {
      const file = touched.startsWith("~/")
        ? join(paths.home, touched.slice(2))
        : isAbsolute(touched)
          ? resolve(touched)
          : resolve(paths.directory, touched)
      for (const folder of nestedRulesFolders(paths.directory, file))
        for (const rulesFile of folderRulesFiles(folder)) {
          if (base.has(rulesFile) || loaded.includes(rulesFile)) continue
          loaded.push(rulesFile)
          const text = reader.text([rulesFile], true)
          if (text.length === 0) continue
          out.push(...text)
          notices.push({ level: "info", message: `rules: ${relative(paths.directory, rulesFile)}` })
        }
    }
    yield* publishNotices
    return out
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
      ...(yield* startupRules(input.sessionID)),
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

  return SystemPrompt.of({ build, rules, nested })
})

/** How a nested rules file is labelled in the synthetic part that gave it to the model (see `SystemPrompt.nested`). */
const NESTED_LABEL = /^Instructions from (.+) \(they apply to files under .+\):$/gm

/** The nested rules files a session's history already holds, in order (the labels of its synthetic parts). */
const nestedInHistory = (messages: ReadonlyArray<MessageWithParts>): Array<string> => {
  const found = new Set<string>()
  for (const message of messages)
    for (const part of message.parts)
      if (part.type === "text" && part.synthetic === true && message.info.role === "assistant")
        for (const match of part.text.matchAll(NESTED_LABEL)) if (match[1]) found.add(match[1])
  return [...found]
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
