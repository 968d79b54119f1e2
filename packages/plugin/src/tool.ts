import { Effect, Schema } from "effect"
import { z } from "zod"
import type { QuestionAnswers, SubagentResult } from "./answers.js"
import type { PermissionError, PermissionRequest } from "./permission.js"
import type { QuestionItem } from "./schema/events.js"

/** A file or image a tool hands back with its text, e.g. a screenshot. `url` may be a `data:` URL. */
export interface ToolAttachment {
  readonly mime: string
  readonly url: string
  readonly filename?: string
}

/** What `execute` returns. `output` is the text the model reads; `title` is the one-line summary a UI shows. */
export interface ToolResult {
  readonly title: string
  readonly output: string
  /** Structured details for UIs and hooks (a diff, an exit code). Set `truncated` to opt out of truncation. */
  readonly metadata?: Record<string, unknown>
  readonly attachments?: ReadonlyArray<ToolAttachment>
}

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  readonly sessionID: string
  readonly messageID: string
  readonly callID: string
  /** The name of the agent making the call. */
  readonly agent: string
  /** The session's working directory (absolute). */
  readonly directory: string
  /** The project root (absolute). */
  readonly root: string
  /** Aborted when the call is cancelled; long-running tools should listen and stop. */
  readonly abort: AbortSignal
  /** Asks for a permission; resolves when allowed, rejects with `PermissionDenied` / `PermissionRejected`. */
  readonly ask: (request: PermissionRequest) => Promise<void>
  /** Publishes live progress (a new title, partial metadata) while the call runs. */
  readonly metadata: (update: { readonly title?: string; readonly metadata?: Record<string, unknown> }) => void
  /**
   * Asks the person questions and resolves with the answers (one list per question); rejects with
   * `QuestionDismissed` when they are not answered. Absent where no one can be asked.
   */
  readonly question?: (questions: ReadonlyArray<QuestionItem>) => Promise<QuestionAnswers>
  /**
   * Runs a subagent in a child session and resolves with what it did (its last text, its calls, tokens and cost,
   * which roll up into this call's message). The child can never do what this session could not. Absent where
   * subagents cannot run.
   */
  readonly subagent?: (request: {
    readonly agent: string
    readonly description: string
    readonly prompt: string
    /** Continue this earlier child session. */
    readonly sessionID?: string
  }) => Promise<SubagentResult>
  /**
   * Expands a command (`name` without the slash, `args` its arguments) as `/name args` expands in the person's
   * session, to the prompt text it stands for (and the agent the command names); rejects, naming the commands there
   * are, when `name` is unknown. Absent where commands cannot run.
   */
  readonly command?: (name: string, args: string) => Promise<{ readonly text: string; readonly agent?: string }>
  /**
   * Hands the session to another primary agent (`plan_exit`: plan → build; `plan_enter`: build → plan): the turn goes
   * on, and from its next step the model runs as that agent (its system prompt, tools and permissions), with this
   * call's output in its history. Ask the person first: the host switches without asking. Rejects when no primary
   * agent of that name can take a prompt. Absent where the agent cannot change (a subagent's turn, a host without it).
   */
  readonly switchAgent?: (agent: string) => Promise<void>
}

/** What a host's truncation makes of a tool's output: the text for the model, and where the full text went. */
export interface TruncatedOutput {
  readonly content: string
  readonly truncated: boolean
  /** The file holding the full text; absent when nothing was cut or the file could not be written. */
  readonly outputPath?: string
}

/**
 * What the host passes to `run`. The host always passes `truncate` (its limits, and where it saves the full text);
 * without it the output is returned untruncated (for tests and for callers that truncate themselves).
 */
export interface ToolRunContext extends ToolContext {
  readonly truncate?: (output: string, tool: string) => Effect.Effect<TruncatedOutput>
}

/** Metadata of a finished call: the tool's own, plus whether the output was cut and where the full text is. */
export interface ToolOutputMetadata extends Readonly<Record<string, unknown>> {
  readonly truncated: boolean
  readonly outputPath?: string
}

/** What `run` succeeds with: the tool's result, after truncation. */
export interface ToolOutput extends Omit<ToolResult, "metadata"> {
  readonly metadata: ToolOutputMetadata
}

/** The model sent arguments that do not fit the tool's schema. `issues` lists `path: message` lines. */
export class ToolInvalidArguments extends Schema.TaggedError<ToolInvalidArguments>()("ToolInvalidArguments", {
  tool: Schema.String,
  issues: Schema.Array(Schema.String),
  message: Schema.String
}) {}

/** `execute` threw or rejected. `message` is the thrown error's message. */
export class ToolExecutionError extends Schema.TaggedError<ToolExecutionError>()("ToolExecutionError", {
  tool: Schema.String,
  message: Schema.String
}) {}

/** The call was aborted, before it started or while it ran. */
export class ToolAborted extends Schema.TaggedError<ToolAborted>()("ToolAborted", {
  tool: Schema.String,
  message: Schema.String
}) {}

/** Every way a tool call can fail; each carries a `message` written for the model. */
export type ToolError = ToolInvalidArguments | ToolExecutionError | ToolAborted | PermissionError

/**
 * How the loop treats a tool's calls, beyond running them. Core reads these, never a tool's name; every trait is
 * optional in a definition and has the default that suits a tool Lathe knows nothing about (an MCP server's).
 */
export interface ToolTraits {
  /** Whether the tool may change files (default `true`); the loop snapshots before a mutating tool. */
  readonly mutates?: boolean
  /**
   * Whether a call counts as a file edit (default `false`): the tool is offered or withheld by the `edit` permission,
   * as `write`, `edit`, `multiedit` and `apply_patch` are, instead of by a permission named after it.
   */
  readonly edits?: boolean
  /**
   * Whether its old output may be pruned from the history the model sees (default `true`). `false` for output the
   * model keeps needing to keep its bearings: a loaded skill, the todo list.
   */
  readonly prunable?: boolean
  /**
   * Whether identical calls in a row are normal for it (default `false`): the doom-loop guard does not count them
   * (the todo tools). `doom_loop.ignored_tools` in config replaces this list.
   */
  readonly repeats?: boolean
  /**
   * Whether a subagent may use it (default `true`). `false` for the tool that starts subagents (no recursion) and
   * for the caller's own plan (the todo tools): a subagent's turn denies them.
   */
  readonly subagents?: boolean
}

/** What a tool author writes: the traits (see {@link ToolTraits}), the schema and `execute`. */
export interface ToolDefinition<Args> extends ToolTraits {
  /** Tells the model what the tool does and when to use it. */
  readonly description: string
  /** The arguments' schema, normally `z.object(…)`; `execute` receives the parsed value. */
  readonly parameters: z.ZodType<Args>
  /**
   * `parameters` as JSON Schema, when it is known ahead: what `z.toJSONSchema(parameters, { io: "input" })` gives,
   * which Lathe otherwise computes when the tool is first offered (0.2–1.7 ms a tool at start-up). It must describe
   * the same input: the model sees this one, while the arguments are still checked against `parameters`. Lathe's own
   * tools give theirs from a file their tests write and check (`src/tool-schemas.json`).
   */
  readonly jsonSchema?: z.core.JSONSchema.BaseSchema | undefined
  /**
   * The files a call reads or changes, as the arguments name them (absolute, `~/…`, or relative to the working
   * directory). After a call succeeds, Lathe adds the rules files (nested `AGENTS.md`) of the folders they are in.
   * Leave it out for tools that touch many files at once (a search).
   */
  readonly paths?: (args: Args) => ReadonlyArray<string>
  /** Does the work. May throw or reject; a rejection from `ctx.ask` passes through as the permission error. */
  readonly execute: (args: Args, ctx: ToolContext) => Promise<ToolResult> | ToolResult
}

/** A defined tool, as the loop and the providers see it: every trait filled in. */
export interface ToolInfo<Args = unknown> extends Required<ToolTraits> {
  readonly id: string
  readonly description: string
  readonly parameters: z.ZodType<Args>
  /** The files a call with these (unvalidated) arguments touches; empty when they do not fit the schema. */
  readonly paths?: (args: unknown) => ReadonlyArray<string>
  /** Validates `args`, runs `execute`, truncates the output. */
  readonly run: (args: unknown, ctx: ToolRunContext) => Effect.Effect<ToolOutput, ToolError>
  /** The parameters as JSON Schema (the input side: fields with defaults are optional), for providers; computed once. */
  readonly jsonSchema: () => z.core.JSONSchema.BaseSchema
}

/** Any tool, whatever its arguments: for lists and records of different tools. */
export type AnyTool = ToolInfo<unknown>

/** The arguments type of a tool. */
export type ToolArgs<T> = T extends ToolInfo<infer Args> ? Args : never

/** `edits[0].oldString`; `(root)` for the value itself. */
const issuePath = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0
    ? "(root)"
    : path.map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`)).join("")

const isPermissionError = (value: unknown): value is PermissionError =>
  typeof value === "object" &&
  value !== null &&
  "_tag" in value &&
  (value._tag === "PermissionDenied" || value._tag === "PermissionRejected")

/** The thrown value as text for the model: an Error's message, a string as is, never "[object Object]". */
const describeThrown = (id: string, thrown: unknown): string => {
  if (typeof thrown === "string") return thrown
  if (thrown instanceof Error) return thrown.message || `${thrown.name}: the ${id} tool failed without a message.`
  if (typeof thrown === "object" && thrown !== null && "message" in thrown && typeof thrown.message === "string")
    return thrown.message
  try {
    return JSON.stringify(thrown) ?? String(thrown)
  } catch {
    return String(thrown)
  }
}

/** Marks the rejection raised by `ctx.abort`, so it is told apart from anything `execute` throws. */
const ABORTED = Symbol("aborted")

/**
 * Defines a tool. `run` validates the arguments (failing with a message the model can act on), runs
 * `execute` with an abort signal that also fires when the call is interrupted, maps failures to
 * {@link ToolError}, and truncates the output once, unless the tool set `metadata.truncated` itself.
 */
const define = <Args>(id: string, definition: ToolDefinition<Args>): ToolInfo<Args> => {
  const { description, parameters, execute } = definition
  const aborted = () => new ToolAborted({ tool: id, message: `The ${id} tool call was aborted.` })

  const call = (args: Args, ctx: ToolRunContext) =>
    Effect.tryPromise({
      try: (interrupt) => {
        const abort = AbortSignal.any([ctx.abort, interrupt])
        const { truncate: _, ...rest } = ctx
        return new Promise<ToolResult>((resolve, reject) => {
          const onAbort = () => reject(ABORTED)
          abort.addEventListener("abort", onAbort, { once: true })
          Promise.resolve()
            .then(() => execute(args, { ...rest, abort }))
            .then(resolve, reject)
            .finally(() => abort.removeEventListener("abort", onAbort))
        })
      },
      catch: (thrown): ToolError =>
        thrown === ABORTED || ctx.abort.aborted
          ? aborted()
          : isPermissionError(thrown)
            ? thrown
            : new ToolExecutionError({ tool: id, message: describeThrown(id, thrown) })
    })

  const run = Effect.fn("Tool.run")(function* (input: unknown, ctx: ToolRunContext) {
    yield* Effect.annotateCurrentSpan("tool", id)
    const parsed = parameters.safeParse(input)
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => `${issuePath(issue.path)}: ${issue.message}`)
      return yield* new ToolInvalidArguments({
        tool: id,
        issues,
        message:
          `The ${id} tool was called with invalid arguments:\n` +
          issues.map((issue) => `- ${issue}\n`).join("") +
          `Rewrite the input so it satisfies the tool's schema and call it again.`
      })
    }
    if (ctx.abort.aborted) return yield* aborted()
    const result = yield* call(parsed.data, ctx)
    if (typeof result?.output !== "string")
      return yield* new ToolExecutionError({ tool: id, message: `The ${id} tool returned no output text.` })

    const own = result.metadata ?? {}
    if (typeof own.truncated === "boolean") {
      const output: ToolOutput = { ...result, metadata: { ...own, truncated: own.truncated } }
      return output
    }
    if (!ctx.truncate) {
      const output: ToolOutput = { ...result, metadata: { ...own, truncated: false } }
      return output
    }
    const cut = yield* ctx.truncate(result.output, id)
    const output: ToolOutput = {
      ...result,
      output: cut.content,
      metadata: { ...own, truncated: cut.truncated, ...(cut.outputPath ? { outputPath: cut.outputPath } : {}) }
    }
    return output
  })

  // Built once, on first use: the loop sends it every step.
  let schema: z.core.JSONSchema.BaseSchema | undefined
  const touched = definition.paths
  return {
    id,
    description,
    parameters,
    mutates: definition.mutates ?? true,
    edits: definition.edits ?? false,
    prunable: definition.prunable ?? true,
    repeats: definition.repeats ?? false,
    subagents: definition.subagents ?? true,
    ...(touched
      ? {
          paths: (input: unknown) => {
            const parsed = parameters.safeParse(input)
            return parsed.success ? touched(parsed.data) : []
          }
        }
      : {}),
    run,
    jsonSchema: () => {
      schema ??= definition.jsonSchema ?? z.toJSONSchema(parameters, { io: "input" })
      return schema
    }
  }
}

/** The tool API: `Tool.define(id, { description, parameters, mutates, edits, …traits, execute })`. */
export const Tool = { define } as const

/** `Tool.define` under its own name: `defineTool(id, { description, parameters, execute })`. */
export const defineTool = define
