import type {
  AgentInfo,
  AnyTool,
  PermissionError,
  PermissionRequest,
  Ruleset,
  ToolError,
  ToolOutput,
  ToolRunContext
} from "@lathe/plugin"
import type { AssistantMessage } from "@lathe/plugin/schema"
import { emptyTokens, type Part, type StepStartPart, type Tokens, type ToolPart } from "@lathe/plugin/schema"
import { Clock, Context, Effect, Exit, Layer, Ref, Semaphore } from "effect"
import { Config } from "../config/config.js"
import { Paths } from "../config/paths.js"
import { PermissionNext } from "../contracts/permission-next.js"
import { Snapshot } from "../contracts/snapshot.js"
import { addTokens } from "../llm/usage.js"
import { Plugins } from "../plugin-host/plugins.js"
import { type TruncationOptions, truncateOutput, truncationDir } from "../plugin-host/truncate.js"
import { ascendingId } from "../schema/id.js"
import type { StoreError } from "../store/session-store.js"
import { SessionWriter } from "../store/session-writer.js"
import { AgentSwitch } from "./agent-switch.js"
import { DoomLoopDetected, type DoomLoopGuard, doomLoopReport } from "./doom-loop.js"
import { NestedRules } from "./nested-rules.js"
import { Question } from "./question.js"
import { Subagents } from "./subagents.js"
import { withSubtaskPart } from "./subtask-part.js"
import { expandTaskCommand } from "./task-command.js"
import { decisionKeeper } from "./tool-permission.js"

/** The step a call belongs to, as the tool runner needs it (the processor's input is one). */
export interface ToolStepInput {
  /** The assistant message the step's parts belong to. */
  readonly assistant: AssistantMessage
  readonly agent: AgentInfo
  /** The tools offered in the step, by id. */
  readonly tools: Readonly<Record<string, AnyTool>>
  readonly abort: AbortSignal
  /** The step's effective ruleset, for the tools' asks. */
  readonly ruleset: Ruleset
  /** The turn's doom-loop guard (its threshold and last calls make the report). */
  readonly guard: DoomLoopGuard
  /** Rulesets of the sessions above (a subagent's parents): every ask must pass them too. */
  readonly constraints?: ReadonlyArray<Ruleset>
}

/**
 * What the calls of one step share, made by {@link ToolRunner}'s `step` and read only by it: mutating tools run one
 * at a time under `lock`, and the tree is snapshotted once, before the step's first mutating tool.
 */
export interface ToolStep {
  readonly input: ToolStepInput
  /** The step's `step-start` part: it records the snapshot as soon as one is taken. */
  readonly stepStart: StepStartPart
  readonly lock: Semaphore.Semaphore
  readonly snapshot: Ref.Ref<string | undefined>
  /**
   * Ends once the tree after the session's previous step is recorded (its patch is measured to it, while this step
   * runs): a mutating call waits for it before it snapshots and changes files.
   */
  readonly previous?: Effect.Effect<void>
}

/**
 * The largest input one tool call may carry, in bytes of JSON (1 MiB). A larger one is refused with an error the model
 * reads, and its part keeps a short placeholder instead, so nothing that large is stored or sent again in later
 * requests. A file bigger than this is written in parts.
 */
export const MAX_TOOL_INPUT_BYTES = 1024 * 1024

/** One call to run. */
export interface ToolCall {
  /** The call's part, already stored as `pending` with its full input. */
  readonly part: ToolPart
  readonly args: Record<string, unknown>
  /** Why the provider found the input invalid, when it did. */
  readonly invalid: string | undefined
  /** Set when the input was over the cap (its size in bytes): the call is refused and `args` is a placeholder. */
  readonly oversized?: number
  /** The length of the run of identical calls this one ends, when it reaches the doom-loop threshold; else 0. */
  readonly doomCount: number
}

/** What the subagents of a call used: rolled up into the step's message. */
export interface ChildUsage {
  readonly tokens: Tokens
  readonly cost: number
}

/** How a call ended, for the processor to fold into its step. */
export interface ToolOutcome {
  /** The call's part as last written (`completed` or `error`). */
  readonly part: ToolPart
  /** The person rejected an ask without guidance: the turn stops after this step. */
  readonly blocked: boolean
  /** The person (or a run no one can answer) stopped a doom loop at this call. */
  readonly doom?: DoomLoopDetected
  /** The step's snapshot (the tree before its first mutating tool), when this call ran a mutating tool after it. */
  readonly snapshot?: string
  /** What the subagents this call ran used. */
  readonly children: ChildUsage
}

const isPermissionError = (error: { readonly _tag: string }): error is PermissionError =>
  error._tag === "PermissionDenied" || error._tag === "PermissionRejected"

/** The files a call touched, by the tool's own account (`paths`); a tool whose `paths` throws touched none. */
const touchedFiles = (tool: AnyTool, args: Record<string, unknown>): ReadonlyArray<string> => {
  try {
    return tool.paths?.(args) ?? []
  } catch {
    return []
  }
}

/**
 * Why a call cannot start (a tool not offered in the step, unreadable input, the turn aborted), or undefined when it
 * can. A call to a tool that exists but was withheld (switched off or denied outright for this agent or one that
 * started it) is refused here, whatever the model sent: offering is the wall, not only the tool list it sees.
 */
const cannotStart = (input: ToolStepInput, call: ToolCall, exists: (name: string) => boolean): string | undefined => {
  const name = call.part.tool
  if (!input.tools[name]) {
    const available = Object.keys(input.tools).sort().join(", ") || "none"
    return exists(name)
      ? `The ${name} tool is not available here: it is switched off or denied for this agent, or for an agent that ` +
          `started it. Do the task without it. Available tools: ${available}.`
      : `There is no tool named "${name}". Available tools: ${available}.`
  }
  if (call.oversized !== undefined)
    return (
      `The ${name} tool was called with ${call.oversized} bytes of input, over the cap of ${MAX_TOOL_INPUT_BYTES} ` +
      "bytes (1 MiB) for one call, so it did not run and its input was not kept. Send less in one call: write a " +
      "large file in parts (write the start, then append with edits), or generate it with a command."
    )
  if (call.invalid !== undefined)
    return (
      `The ${name} tool was called with input that could not be read: ${call.invalid}\n` +
      "Rewrite the input as JSON that satisfies the tool's schema and call it again."
    )
  if (input.abort.aborted) return "aborted"
  return undefined
}

/** The model-facing text of a failed call; `blocked` when the person rejected an ask without guidance. */
const failureText = (
  failure: ToolError | StoreError | undefined,
  aborted: boolean
): { readonly text: string; readonly blocked: boolean } => {
  if (failure === undefined) return { text: aborted ? "aborted" : "The tool call was interrupted.", blocked: false }
  if (failure._tag === "ToolAborted") return { text: "aborted", blocked: false }
  const blocked = isPermissionError(failure) && failure._tag === "PermissionRejected" && failure.feedback === undefined
  return { text: failure.message, blocked }
}

/** The text the model reads for a call that ended a doom loop the person stopped. */
const doomText = (tool: string, count: number, calls: ReadonlyArray<{ tool: string; input: string }>) =>
  `Stopped: the ${tool} tool was called ${count} times in a row with the same input, and the user chose to stop the ` +
  `loop. Last calls:\n${calls.map((c) => `${c.tool} ${c.input}`).join("\n")}`

/** The services a call runs on, bound once by the ToolRunner's layer. */
interface RunnerServices {
  readonly writer: SessionWriter["Service"]
  readonly permission: PermissionNext["Service"]
  readonly snapshots: Snapshot["Service"]
  readonly plugins: Plugins["Service"]
  readonly paths: Paths["Service"]
  readonly question: Question["Service"]
  readonly subagents: Subagents["Service"]
  readonly agentSwitch: AgentSwitch["Service"]
  readonly nestedRules: NestedRules["Service"]
  /** How a tool's output is cut (config `tool_output`). */
  readonly truncation: TruncationOptions
}

/** What decided a call's asks, kept for its part (see `decisionKeeper`). */
type Decisions = ReturnType<typeof decisionKeeper>

/** Asks a permission for a call, with the step's ruleset, constraints and abort signal. */
const askFor =
  (services: RunnerServices, input: ToolStepInput, part: ToolPart, decisions?: Decisions) =>
  (request: PermissionRequest) =>
    services.permission.ask({
      ...request,
      sessionID: part.sessionID,
      messageID: input.assistant.id,
      callID: part.callID,
      ruleset: input.ruleset,
      ...(input.constraints && input.constraints.length > 0 ? { constraints: input.constraints } : {}),
      signal: input.abort,
      ...(decisions ? { onDecided: decisions.decided } : {})
    })

/** Asks `doom_loop` for a call that ends a run of identical calls; the stop as an error when refused. */
const confirmLoop = Effect.fnUntraced(function* (
  services: RunnerServices,
  input: ToolStepInput,
  call: ToolCall,
  decisions: Decisions
) {
  const { tool } = call.part
  const decided = yield* Effect.exit(
    askFor(
      services,
      input,
      call.part,
      decisions
    )({
      permission: "doom_loop",
      patterns: [tool],
      always: [tool],
      metadata: { tool, input: call.args, count: call.doomCount }
    })
  )
  if (Exit.isSuccess(decided)) return undefined
  const calls = input.guard.last(call.doomCount)
  const report = doomLoopReport(tool, call.doomCount, input.guard.options.threshold, calls)
  return new DoomLoopDetected({ ...report, calls: [...calls] })
})

/**
 * The step's snapshot, taken now when this is its first mutating call (and recorded on its step-start), once the
 * tree after the previous step is recorded: its patch measures the work tree as the previous step's tools left it.
 */
const snapshotOnce = Effect.fnUntraced(function* (services: RunnerServices, step: ToolStep) {
  const taken = yield* Ref.get(step.snapshot)
  if (taken !== undefined) return taken
  if (step.previous) yield* step.previous
  const hash = yield* services.snapshots.track.pipe(
    Effect.catch((error) =>
      Effect.logWarning("snapshot failed; this step cannot be undone", error).pipe(Effect.as(undefined))
    )
  )
  if (hash === undefined) return undefined
  yield* Ref.set(step.snapshot, hash)
  yield* services.writer.putPart({ ...step.stepStart, snapshot: hash })
  return hash
})

/**
 * The context `execute` gets (asks, questions and subagents run on this fiber's services), and the effect that
 * marks the call settled: from then on its part is final, and a late progress update (a tool's throttle timer
 * firing after it returned or threw) never turns a completed or failed call back into a running one.
 */
const toolContext = Effect.fnUntraced(function* (
  services: RunnerServices,
  input: ToolStepInput,
  part: ToolPart,
  args: Record<string, unknown>,
  start: number,
  onChild: (used: ChildUsage) => void,
  decisions: Decisions
) {
  const { paths, truncation, subagents, question, writer } = services
  const sessionID = part.sessionID
  let open = true
  const settled = Effect.sync(() => {
    open = false
  })
  const runPromiseExit = Effect.runPromiseExitWith(yield* Effect.context<never>())
  /** Runs an effect for a tool's Promise API: its value, or its typed failure thrown as is. */
  const settle = async <A, E>(effect: Effect.Effect<A, E>, interrupted: string): Promise<A> => {
    const exit = await runPromiseExit(effect)
    if (Exit.isSuccess(exit)) return exit.value
    const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
    throw error && error._tag === "Fail" ? error.error : new Error(interrupted)
  }
  const context: ToolRunContext = {
    sessionID,
    messageID: input.assistant.id,
    callID: part.callID,
    agent: input.agent.name,
    directory: paths.directory,
    root: paths.root,
    abort: input.abort,
    truncate: (output: string, tool: string) => truncateOutput(output, { ...truncation, name: tool }),
    ask: (request) => settle(askFor(services, input, part, decisions)(request), "The permission ask was interrupted."),
    subagent: async (request) => {
      const result = await settle(
        withSubtaskPart(writer, part, request, (onStart) =>
          subagents.run({
            parentSessionID: sessionID,
            callID: part.callID,
            agent: request.agent,
            description: request.description,
            prompt: request.prompt,
            ...(request.sessionID ? { sessionID: request.sessionID } : {}),
            abort: input.abort,
            constraints: [...(input.constraints ?? []), input.ruleset],
            callerTools: Object.keys(input.tools),
            onStart
          })
        ),
        "The subagent was interrupted."
      )
      onChild(result)
      return result
    },
    command: (name, args) =>
      settle(expandTaskCommand(services.plugins, name, args), "The command's expansion was interrupted."),
    // A subagent's turn (it runs under its callers' rules) never changes the session's agent.
    ...(input.constraints && input.constraints.length > 0
      ? {}
      : {
          switchAgent: (agent: string) =>
            settle(services.agentSwitch.request(sessionID, agent), "The agent switch was interrupted.")
        }),
    question: (questions) =>
      settle(
        question.ask({ sessionID, callID: part.callID, questions, signal: input.abort }),
        "The questions were interrupted."
      ),
    metadata: (update) => {
      if (!open) return
      const live: ToolPart = {
        ...part,
        state: {
          status: "running",
          input: args,
          time: { start },
          ...decisions.field(),
          ...(update.title !== undefined ? { title: update.title } : {}),
          ...(update.metadata !== undefined ? { metadata: update.metadata } : {})
        }
      }
      void runPromiseExit(Effect.suspend(() => (open ? writer.putPart(live) : Effect.void)))
    }
  }
  return { context, settled }
})

/** `tool.after`, the `completed` write, then the rules the touched files bring in. */
const complete = Effect.fnUntraced(function* (
  services: RunnerServices,
  input: ToolStepInput,
  tool: AnyTool,
  part: ToolPart,
  args: Record<string, unknown>,
  start: number,
  output: ToolOutput,
  save: (part: ToolPart, durable?: boolean) => Effect.Effect<void, StoreError>,
  decisions: Decisions
) {
  const after = yield* services.plugins.trigger(
    "tool.after",
    { tool: part.tool, sessionID: part.sessionID, callID: part.callID, args },
    { title: output.title, output: output.output, metadata: { ...output.metadata } }
  )
  const end = yield* Clock.currentTimeMillis
  // A call that may have changed files is on disk before anyone hears it completed: a process killed from here
  // on never runs it twice (recovery would find it `running` and tell the model it was interrupted).
  yield* save(
    {
      ...part,
      state: {
        status: "completed",
        input: args,
        output: after.output,
        title: after.title,
        metadata: after.metadata,
        ...(output.attachments && output.attachments.length > 0 ? { attachments: [...output.attachments] } : {}),
        ...decisions.field(),
        time: { start, end }
      }
    },
    tool.mutates === true
  )
  const touched = touchedFiles(tool, args)
  const rules = touched.length > 0 ? yield* services.nestedRules.forFiles(part.sessionID, touched) : []
  if (rules.length === 0) return
  const text: Part = {
    id: ascendingId("part"),
    sessionID: part.sessionID,
    messageID: input.assistant.id,
    type: "text",
    synthetic: true,
    text: rules.join("\n\n")
  }
  yield* services.writer.putPart(text)
})

/** The ToolRunner's shape. */
export interface ToolRunnerService {
  /**
   * What the calls of one step share; `stepStart` is the step's stored `step-start` part; `previous`, when given, ends
   * once the tree after the session's previous step is recorded (see `ToolStep.previous`).
   */
  readonly step: (
    input: ToolStepInput,
    stepStart: StepStartPart,
    previous?: Effect.Effect<void>
  ) => Effect.Effect<ToolStep>
  /** Runs one call of `step` to its end. */
  readonly run: (step: ToolStep, call: ToolCall) => Effect.Effect<ToolOutcome>
}

/**
 * Runs one tool call through its state machine: doom-loop ask, `tool.before`, lazy snapshot (mutating tools),
 * `running`, execute, `tool.after`, then `completed` or `error`, each state written and announced through the
 * `SessionWriter`. `run` never fails: every failure becomes the part's `error` state with a message for the model,
 * and it returns a {@link ToolOutcome} (blocked, a stopped doom loop, the snapshot, subagents' usage) instead of
 * telling the processor by callback. A store failure is logged; the outcome carries the part as last written. After
 * a call that touched files, the rules those files bring in ({@link NestedRules}) follow as a synthetic text part.
 */
export class ToolRunner extends Context.Service<ToolRunner, ToolRunnerService>()("@lathe/core/ToolRunner") {
  /** The real runner: asks through `PermissionNext`, snapshots through `Snapshot`, writes through `SessionWriter`. */
  static readonly layer = Layer.effect(
    ToolRunner,
    Effect.suspend(() => makeToolRunner)
  )
}

/** The real runner over the services bound here, once. */
const makeToolRunner = Effect.gen(function* () {
  const paths = yield* Paths
  const limits = (yield* Config).info.tool_output
  const services: RunnerServices = {
    writer: yield* SessionWriter,
    permission: yield* PermissionNext,
    snapshots: yield* Snapshot,
    plugins: yield* Plugins,
    paths,
    question: yield* Question,
    subagents: yield* Subagents,
    agentSwitch: yield* AgentSwitch,
    nestedRules: yield* NestedRules,
    truncation: {
      dir: truncationDir(paths.data),
      ...(limits?.max_lines ? { maxLines: limits.max_lines } : {}),
      ...(limits?.max_bytes ? { maxBytes: limits.max_bytes } : {})
    }
  }
  const { writer, plugins } = services

  const step = (input: ToolStepInput, stepStart: StepStartPart, previous?: Effect.Effect<void>) =>
    Effect.all({ lock: Semaphore.make(1), snapshot: Ref.make<string | undefined>(undefined) }).pipe(
      Effect.map(
        ({ lock, snapshot }): ToolStep => ({ input, stepStart, lock, snapshot, ...(previous ? { previous } : {}) })
      )
    )

  const run = Effect.fn("ToolRunner.run")(function* (step: ToolStep, call: ToolCall) {
    const { input } = step
    const start = yield* Clock.currentTimeMillis
    let latest: ToolPart = call.part
    let children: ChildUsage = { tokens: emptyTokens(), cost: 0 }
    let snapshot: string | undefined
    let blocked = false
    let doom: DoomLoopDetected | undefined
    const decisions = decisionKeeper()
    const save = (part: ToolPart, durable = false) =>
      Effect.suspend(() => {
        latest = part
        return writer.putPart(part, { durable })
      })
    const outcome = (): ToolOutcome => ({
      part: latest,
      blocked,
      ...(doom ? { doom } : {}),
      ...(snapshot !== undefined ? { snapshot } : {}),
      children
    })
    const fail = Effect.fnUntraced(function* (error: string) {
      const end = yield* Clock.currentTimeMillis
      yield* save({
        ...call.part,
        state: { status: "error", input: call.args, error, ...decisions.field(), time: { start, end } }
      })
    })

    const body = Effect.gen(function* () {
      const refused = cannotStart(input, call, (name) => plugins.tools.some((tool) => tool.id === name))
      if (refused !== undefined) return yield* fail(refused)
      const tool = input.tools[call.part.tool] as AnyTool
      if (call.doomCount > 0) {
        doom = yield* confirmLoop(services, input, call, decisions)
        if (doom !== undefined) return yield* fail(doomText(call.part.tool, call.doomCount, doom.calls))
      }
      const { part } = call
      const before = yield* plugins.trigger(
        "tool.before",
        { tool: part.tool, sessionID: part.sessionID, callID: part.callID },
        { args: { ...call.args } }
      )
      const args = before.args
      if (before.block !== undefined)
        return yield* fail(`The ${part.tool} call was blocked by a plugin: ${before.block}`)

      const execute = Effect.gen(function* () {
        if (tool.mutates) snapshot = yield* snapshotOnce(services, step)
        yield* save({ ...part, state: { status: "running", input: args, time: { start } } })
        const { context, settled } = yield* toolContext(
          services,
          input,
          part,
          args,
          start,
          (used) => {
            children = { tokens: addTokens(children.tokens, used.tokens), cost: children.cost + used.cost }
          },
          decisions
        )
        return yield* tool.run(args, context).pipe(Effect.ensuring(settled))
      })
      const result = yield* Effect.exit(tool.mutates ? step.lock.withPermit(execute) : execute)
      if (Exit.isFailure(result)) {
        const reason = result.cause.reasons.find((r) => r._tag === "Fail")
        const failed = failureText(reason?._tag === "Fail" ? reason.error : undefined, input.abort.aborted)
        blocked = failed.blocked
        return yield* fail(failed.text)
      }
      yield* complete(services, input, tool, part, args, start, result.value, save, decisions)
    })
    yield* body.pipe(Effect.catchTag("StoreError", (error) => Effect.logError("could not store a tool part", error)))
    return outcome()
  })

  return ToolRunner.of({ step, run })
})
