import { Clock, Effect, Exit, type Semaphore } from "effect"
import type { PermissionError, PermissionRequest } from "../contracts/permission-next.js"
import type { AnyTool } from "../plugin-host/tool.js"
import type { TruncationOptions } from "../plugin-host/truncate.js"
import { addTokens } from "../provider/usage.js"
import { ascendingId } from "../schema/id.js"
import type { Part, Tokens, ToolPart } from "../schema/part.js"
import type { StoreError } from "../store/session-store.js"
import { doomLoopReport } from "./doom-loop.js"
import type { ProcessorInput, ProcessorServices } from "./processor.js"
import { DoomLoopDetected } from "./processor.js"

/** What the tool calls of one step share. */
export interface ToolRunState {
  readonly step: number
  /** The tree hash taken before the step's first mutating tool; undefined until then (or when snapshots are off). */
  snapshot: string | undefined
  /** Set when the person rejected an ask without guidance: the turn stops after this step. */
  blocked: boolean
  /** Set when the person stopped a doom loop. */
  doom: DoomLoopDetected | undefined
  /** What the step's subagents used, added to the step's message. */
  children: { tokens: Tokens; cost: number }
  /** Mutating tools run one at a time (and the lazy snapshot is taken once, under this lock). */
  readonly lock: Semaphore.Semaphore
  readonly truncation: TruncationOptions
}

/** One call to run. */
export interface ToolCall {
  /** The call's part, already stored as `pending` with its full input. */
  readonly part: ToolPart
  readonly args: Record<string, unknown>
  /** Why the provider found the input invalid, when it did. */
  readonly invalid: string | undefined
  /** The length of the run of identical calls this one ends, when it reaches the doom-loop threshold; else 0. */
  readonly doomCount: number
  /** Stores and announces the part; `durable` writes it out first (the store's batch is flushed). */
  readonly save: (part: Part, durable?: boolean) => Effect.Effect<void, StoreError>
  readonly onSnapshot: (hash: string) => Effect.Effect<void, StoreError>
}

const isPermissionError = (error: { readonly _tag: string }): error is PermissionError =>
  error._tag === "PermissionDenied" || error._tag === "PermissionRejected"

/**
 * Runs one tool call through its state machine: doom-loop ask, `tool.before`, lazy snapshot (mutating tools),
 * `running`, execute, `tool.after`, then `completed` or `error`. Never fails: every failure becomes the part's
 * `error` state with a message for the model. Store failures are logged (the part stays in memory and the
 * step's final writes retry it).
 */
export const runToolCall = (
  services: ProcessorServices,
  input: ProcessorInput,
  state: ToolRunState,
  call: ToolCall
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { part } = call
    const sessionID = input.assistant.sessionID
    const start = yield* Clock.currentTimeMillis
    const fail = (error: string, metadata?: Record<string, unknown>) =>
      Effect.gen(function* () {
        const end = yield* Clock.currentTimeMillis
        yield* call.save({
          ...part,
          state: {
            status: "error",
            input: call.args,
            error,
            ...(metadata ? { metadata } : {}),
            time: { start, end }
          }
        })
      })

    const tool = input.tools[part.tool]
    if (!tool) {
      const available = Object.keys(input.tools).sort().join(", ") || "none"
      return yield* fail(`There is no tool named "${part.tool}". Available tools: ${available}.`)
    }
    if (call.invalid !== undefined) {
      return yield* fail(
        `The ${part.tool} tool was called with input that could not be read: ${call.invalid}\n` +
          "Rewrite the input as JSON that satisfies the tool's schema and call it again."
      )
    }
    if (input.abort.aborted) return yield* fail("aborted")

    const ask = (request: PermissionRequest) =>
      services.permission.ask({
        ...request,
        sessionID,
        messageID: input.assistant.id,
        callID: part.callID,
        ruleset: input.ruleset,
        ...(input.constraints && input.constraints.length > 0 ? { constraints: input.constraints } : {}),
        signal: input.abort
      })

    if (call.doomCount > 0) {
      const decided = yield* Effect.exit(
        ask({
          permission: "doom_loop",
          patterns: [part.tool],
          always: [part.tool],
          metadata: { tool: part.tool, input: call.args, count: call.doomCount }
        })
      )
      if (Exit.isFailure(decided)) {
        const calls = input.guard.last(call.doomCount)
        const report = doomLoopReport(part.tool, call.doomCount, input.guard.options.threshold, calls)
        state.doom ??= new DoomLoopDetected({ ...report, calls: [...calls] })
        return yield* fail(
          `Stopped: the ${part.tool} tool was called ${call.doomCount} times in a row with the same input, ` +
            `and the user chose to stop the loop. Last calls:\n${calls.map((c) => `${c.tool} ${c.input}`).join("\n")}`
        )
      }
    }

    const before = yield* services.plugins.trigger(
      "tool.before",
      { tool: part.tool, sessionID, callID: part.callID },
      { args: { ...call.args } }
    )
    const args = before.args
    if (before.block !== undefined) return yield* fail(`The ${part.tool} call was blocked by a plugin: ${before.block}`)

    const execute = Effect.gen(function* () {
      if (tool.mutates && state.snapshot === undefined) {
        const hash = yield* services.snapshot.track.pipe(
          Effect.catch((error) =>
            Effect.logWarning("snapshot failed; this step cannot be undone", error).pipe(Effect.as(undefined))
          )
        )
        if (hash !== undefined) {
          state.snapshot = hash
          yield* call.onSnapshot(hash)
        }
      }
      yield* call.save({ ...part, state: { status: "running", input: args, time: { start } } })
      const context = yield* Effect.context<never>()
      const runPromiseExit = Effect.runPromiseExitWith(context)
      /** Runs an effect for a tool's Promise API: its value, or its typed failure thrown as is. */
      const settle = async <A, E>(effect: Effect.Effect<A, E>, interrupted: string): Promise<A> => {
        const exit = await runPromiseExit(effect)
        if (Exit.isSuccess(exit)) return exit.value
        const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
        throw error && error._tag === "Fail" ? error.error : new Error(interrupted)
      }
      let live: ToolPart = part
      return yield* tool.run(args, {
        sessionID,
        messageID: input.assistant.id,
        callID: part.callID,
        agent: input.agent.name,
        directory: services.paths.directory,
        root: services.paths.root,
        abort: input.abort,
        truncation: state.truncation,
        ask: (request) => settle(ask(request), "The permission ask was interrupted."),
        subagent: async (request) => {
          const result = await settle(
            services.subagents.run({
              parentSessionID: sessionID,
              callID: part.callID,
              agent: request.agent,
              description: request.description,
              prompt: request.prompt,
              ...(request.sessionID ? { sessionID: request.sessionID } : {}),
              abort: input.abort,
              constraints: [...(input.constraints ?? []), input.ruleset]
            }),
            "The subagent was interrupted."
          )
          state.children = {
            tokens: addTokens(state.children.tokens, result.tokens),
            cost: state.children.cost + result.cost
          }
          return result
        },
        question: (questions) =>
          settle(
            services.question.ask({ sessionID, callID: part.callID, questions, signal: input.abort }),
            "The questions were interrupted."
          ),
        metadata: (update) => {
          live = {
            ...part,
            state: {
              status: "running",
              input: args,
              time: { start },
              ...(update.title !== undefined ? { title: update.title } : {}),
              ...(update.metadata !== undefined ? { metadata: update.metadata } : {})
            }
          }
          void runPromiseExit(call.save(live))
        }
      })
    })
    const result = yield* Effect.exit(tool.mutates ? state.lock.withPermit(execute) : execute)

    if (Exit.isFailure(result)) {
      const error = result.cause.reasons.find((reason) => reason._tag === "Fail")
      if (error?._tag !== "Fail") return yield* fail(input.abort.aborted ? "aborted" : "The tool call was interrupted.")
      const failure = error.error
      if (failure._tag === "ToolAborted") return yield* fail("aborted")
      if (isPermissionError(failure) && failure._tag === "PermissionRejected" && failure.feedback === undefined)
        state.blocked = true
      return yield* fail(failure.message)
    }
    const output = result.value
    const after = yield* services.plugins.trigger(
      "tool.after",
      { tool: part.tool, sessionID, callID: part.callID, args },
      { title: output.title, output: output.output, metadata: { ...output.metadata } }
    )
    const end = yield* Clock.currentTimeMillis
    yield* call.save(
      {
        ...part,
        state: {
          status: "completed",
          input: args,
          output: after.output,
          title: after.title,
          metadata: after.metadata,
          ...(output.attachments && output.attachments.length > 0 ? { attachments: [...output.attachments] } : {}),
          time: { start, end }
        }
        // A call that may have changed files is on disk before anyone hears it completed: a process killed from here
        // on never runs it twice (recovery would find it `running` and tell the model it was interrupted).
      },
      tool.mutates === true
    )
    const touched = touchedFiles(tool, args)
    const rules = touched.length > 0 && input.rulesFor ? yield* input.rulesFor(touched) : []
    if (rules.length > 0)
      yield* call.save({
        id: ascendingId("part"),
        sessionID,
        messageID: input.assistant.id,
        type: "text",
        synthetic: true,
        text: rules.join("\n\n")
      })
  }).pipe(Effect.catchTag("StoreError", (error) => Effect.logError("could not store a tool part", error)))

/** The files a call touched, by the tool's own account (`paths`); a tool whose `paths` throws touched none. */
const touchedFiles = (tool: AnyTool, args: Record<string, unknown>): ReadonlyArray<string> => {
  try {
    return tool.paths?.(args) ?? []
  } catch {
    return []
  }
}
