import type { AssistantMessage, MessageError, MessageWithParts, Session } from "@lathe/plugin/schema"
import { Context, Deferred, Effect, Layer, Ref, Schema, Stream } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import type { ConfigInfo } from "../config/config.js"
import type { LLMEvent, LLMRequest } from "../llm/llm.js"
import { stepCost, tokensFromUsage } from "../llm/usage.js"
import type { SessionStore } from "../store/session-store.js"

// The ledger counts whole nano-dollars: sums of integers are exact, so a cap is never crossed (or missed) by a float
// rounding error, and 2^53 nano-dollars (about 9 million USD) is far above any budget.
const NANO = 1_000_000_000
const toNano = (usd: number): number => Math.max(0, Math.round(usd * NANO))
const toUsd = (nano: number): number => nano / NANO

/** Which cap a ledger enforces: the turn's (`--max-cost`, `budget.max_cost`) or the session's (`max_session_cost`). */
export type BudgetCap = "turn" | "session"

/** The turn's budget cannot cover its next model call: it stops there, the session kept as it is. */
export class BudgetExhausted extends Schema.TaggedError<BudgetExhausted>()("BudgetExhausted", {
  /** USD spent against the cap (for a session cap, the session's earlier turns included). */
  spent: Schema.Number,
  /** The cap, USD. */
  limit: Schema.Number,
  message: Schema.String
}) {}

/** A budget applies but the model has no price, so what it spends cannot be counted. */
export class BudgetUnpriced extends Schema.TaggedError<BudgetUnpriced>()("BudgetUnpriced", {
  model: Schema.String,
  message: Schema.String
}) {}

/**
 * What one model call may cost, before it is sent: its input's (conservative) estimate, and the output price of every
 * token it may be allowed to write, up to what it would be allowed without a budget.
 */
export interface CallPrice {
  /** The request's input tokens, estimated (see {@link estimateInputTokens}). */
  readonly inputTokens: number
  /** USD per input token (the dearer of the input and cache-write prices). */
  readonly inputPrice: number
  /** USD per output token (reasoning is billed as output). */
  readonly outputPrice: number
  /** The most output tokens the call would be allowed without a budget. */
  readonly maxOutput: number
}

/**
 * One call's hold: its input estimate plus its whole output allowance, held until the call ends. The call is sent
 * with `outputTokens` as its output limit, so it cannot spend more than it holds except by the input estimate's error.
 */
export interface BudgetHold {
  readonly nano: number
  /** The call's output limit: what the budget can pay for, never above `CallPrice.maxOutput`. */
  readonly outputTokens: number
  /** The call's input estimate, in tokens, before calibration (`CallPrice.inputTokens`). */
  readonly inputTokens: number
}

/** How a call asks for its hold. */
export interface ReserveOptions {
  /**
   * A call the turn can do without (the session's title): when it does not fit now it is refused at once, without
   * waiting for calls in flight and without stopping the turn.
   */
  readonly optional?: boolean
}

/**
 * One budget, shared by a turn and every subagent it starts: each model call holds its input estimate and its whole
 * output allowance before it is sent and settles its actual cost when its stream ends. Holding is one atomic
 * check-and-hold, so calls running at once (parallel subagents) never together hold more than the cap.
 */
export interface BudgetLedger {
  readonly cap: BudgetCap
  /** The cap, USD. */
  readonly limit: number
  /**
   * Holds a call's input estimate plus as many output tokens as what is left can pay for (at most
   * `CallPrice.maxOutput`). Fails when not even {@link MIN_OUTPUT_TOKENS} (or the call's own smaller limit) fit in
   * what is left once settled calls are counted; then every later call is refused too: the turn and its subagents
   * stop rather than squeeze in smaller calls. When it is other calls' holds that stand in the way, it waits for
   * them to settle (they give back what they did not spend), so a call is cut short only by what was really spent.
   */
  readonly reserve: (call: CallPrice, options?: ReserveOptions) => Effect.Effect<BudgetHold, BudgetExhausted>
  /**
   * Releases the hold (once; settling it again only adds `actual`) and records what the call actually cost (USD).
   * `inputSeen`, the input tokens the provider counted, calibrates later calls' input estimates: when it is more
   * than this call's estimate, every later estimate is raised by that ratio (the largest seen, at most
   * {@link MAX_CALIBRATION}), so an estimate that proved low stays wrong for one call, not for the rest of the turn.
   */
  readonly settle: (hold: BudgetHold, actual: number, inputSeen?: number) => Effect.Effect<void>
  /** USD spent so far against the cap. */
  readonly spent: Effect.Effect<number>
}

interface LedgerState {
  readonly spent: number
  readonly held: number
  /** What input estimates are multiplied by: the largest ratio of counted to estimated input seen, at least 1. */
  readonly calibration: number
  readonly exhausted: boolean
  /** Calls waiting for holds to be released; woken at every settle. */
  readonly waiters: ReadonlyArray<Deferred.Deferred<void>>
}

/** How to go on after a stop, by cap. */
const goOn = (cap: BudgetCap): string =>
  cap === "turn"
    ? 'The work so far is kept; to go on, run lathe run -c "continue" with a higher --max-cost (or raise ' +
      "budget.max_cost in lathe.json)."
    : 'The work so far is kept; to go on, raise budget.max_session_cost in lathe.json, then run lathe run -c "continue".'

/** The person-facing words of a stop: what was spent of which cap, what the refused call would have cost, how to go on. */
export const exhaustedMessage = (cap: BudgetCap, spent: number, limit: number, next: number): string =>
  `Stopped: the ${cap === "turn" ? "turn" : "session"} has spent $${spent.toFixed(4)} of its $${limit.toFixed(4)} ` +
  `budget, which cannot cover another model call (the next would have cost up to $${next.toFixed(4)}). ${goOn(cap)}`

/** `BudgetExhausted` as recorded on the turn's last message. */
export const budgetMessageError = (error: BudgetExhausted): MessageError => ({
  name: "BudgetExhausted",
  message: error.message,
  spent: error.spent,
  limit: error.limit
})

/** What `reserve` makes of a call, given the ledger's state: hold it, wait for holds to settle, or refuse it. */
type Decision =
  | { readonly _tag: "hold"; readonly hold: BudgetHold }
  | { readonly _tag: "wait" }
  | { readonly _tag: "refuse"; readonly next: number }

/** The most a turn's input estimates are raised by what providers counted (a bad count cannot stop every call). */
const MAX_CALIBRATION = 3

const decide = (now: LedgerState, limitNano: number, call: CallPrice): Decision => {
  const input = Math.ceil(call.inputTokens * now.calibration * call.inputPrice * NANO)
  const perToken = call.outputPrice * NANO
  // Output tokens `room` nano-dollars pay for after the input (all of them at an output price of zero).
  const tokensIn = (room: number) =>
    room < input ? -1 : perToken > 0 ? Math.floor((room - input) / perToken) : call.maxOutput
  const floor = Math.min(MIN_OUTPUT_TOKENS, call.maxOutput)
  // Spending only grows: what settled calls left is the most this call can ever be given.
  const ever = Math.min(call.maxOutput, tokensIn(limitNano - now.spent))
  if (now.exhausted || ever < floor) return { _tag: "refuse", next: input + Math.ceil(floor * perToken) }
  if (Math.min(call.maxOutput, tokensIn(limitNano - now.spent - now.held)) < ever) return { _tag: "wait" }
  return {
    _tag: "hold",
    hold: { nano: input + Math.ceil(ever * perToken), outputTokens: ever, inputTokens: call.inputTokens }
  }
}

const makeLedger = (cap: BudgetCap, limit: number, before: number) =>
  Effect.gen(function* () {
    const limitNano = toNano(limit)
    const state = yield* Ref.make<LedgerState>({
      spent: toNano(before),
      held: 0,
      calibration: 1,
      exhausted: false,
      waiters: []
    })
    const released = new WeakSet<BudgetHold>()
    const refusal = (spent: number, next: number) =>
      new BudgetExhausted({
        spent: toUsd(spent),
        limit,
        message: exhaustedMessage(cap, toUsd(spent), limit, toUsd(next))
      })
    const reserve = Effect.fnUntraced(function* (call: CallPrice, options?: ReserveOptions) {
      for (;;) {
        const woken = yield* Deferred.make<void>()
        const outcome = yield* Ref.modify(state, (now): [BudgetHold | BudgetExhausted | undefined, LedgerState] => {
          const decision = decide(now, limitNano, call)
          if (decision._tag === "hold") return [decision.hold, { ...now, held: now.held + decision.hold.nano }]
          if (decision._tag === "refuse" || options?.optional)
            return [
              refusal(now.spent, decision._tag === "refuse" ? decision.next : 0),
              options?.optional ? now : { ...now, exhausted: true }
            ]
          return [undefined, { ...now, waiters: [...now.waiters, woken] }]
        })
        if (outcome instanceof BudgetExhausted) return yield* outcome
        if (outcome !== undefined) return outcome
        yield* Deferred.await(woken)
      }
    })
    const settle = Effect.fnUntraced(function* (hold: BudgetHold, actual: number, inputSeen?: number) {
      const release = released.has(hold) ? 0 : hold.nano
      released.add(hold)
      const ratio = inputSeen !== undefined && hold.inputTokens > 0 ? inputSeen / hold.inputTokens : 1
      const waiters = yield* Ref.modify(state, (now): [LedgerState["waiters"], LedgerState] => [
        now.waiters,
        {
          ...now,
          held: now.held - release,
          spent: now.spent + toNano(actual),
          calibration: Math.min(MAX_CALIBRATION, Math.max(now.calibration, ratio)),
          waiters: []
        }
      ])
      for (const waiter of waiters) yield* Deferred.succeed(waiter, undefined)
    })
    const ledger: BudgetLedger = {
      cap,
      limit,
      reserve,
      settle,
      spent: Ref.get(state).pipe(Effect.map((now) => toUsd(now.spent)))
    }
    return ledger
  })

/** What one turn's budget is made from. */
export interface BudgetRequest {
  /** The turn's cap (`--max-cost`), over config `budget.max_cost`. */
  readonly maxCost?: number | undefined
  /** Config `budget.max_session_cost`. */
  readonly maxSessionCost?: number | undefined
  /** USD the session spent in earlier turns (its subagents' included). */
  readonly sessionSpent: number
}

/**
 * Opens budget ledgers. A turn of a top-level session opens one (`open`) when a cap applies; its subagents' turns
 * are handed the same ledger, never one of their own.
 */
export class Budget extends Context.Service<
  Budget,
  {
    /** The ledger of the cap that binds first (the smaller remainder), or undefined when no cap applies. */
    readonly open: (request: BudgetRequest) => Effect.Effect<BudgetLedger | undefined>
  }
>()("@lathe/core/Budget") {
  static readonly layer = Layer.succeed(
    Budget,
    Budget.of({
      open: Effect.fn("Budget.open")(function* (request: BudgetRequest) {
        const turn = request.maxCost
        const session = request.maxSessionCost
        if (turn === undefined && session === undefined) return undefined
        if (session !== undefined && (turn === undefined || session - request.sessionSpent < turn))
          return yield* makeLedger("session", session, request.sessionSpent)
        return yield* makeLedger("turn", turn as number, 0)
      })
    })
  )
}

/** The caps config and the run ask for: the run's `--max-cost` over config `budget.max_cost`. */
export const budgetRequest = (
  config: ConfigInfo,
  maxCost: number | undefined,
  history: ReadonlyArray<MessageWithParts>
): BudgetRequest => ({
  maxCost: maxCost ?? config.budget?.max_cost,
  maxSessionCost: config.budget?.max_session_cost,
  sessionSpent: history.reduce((sum, m) => sum + (m.info.role === "assistant" ? m.info.cost : 0), 0)
})

/**
 * Whether what `model` spends can be counted: the catalogue or the config gives it a price. A config `cost` of zero
 * counts (the person said the model is free); a catalogue row of zeros does not (unknown and free look the same).
 */
export const isPriced = (model: ModelInfo, config: ConfigInfo): boolean =>
  model.cost.input > 0 ||
  model.cost.output > 0 ||
  config.provider?.[model.providerID]?.models?.[model.modelID]?.cost !== undefined

/** Refuses a model without a price under a budget, saying how to give it one. */
export const unpricedModel = (model: ModelInfo): BudgetUnpriced => {
  const ref = `${model.providerID}/${model.modelID}`
  return new BudgetUnpriced({
    model: ref,
    message:
      `A cost budget is set but the model ${ref} has no price, so what it spends cannot be counted. Give it one in ` +
      `lathe.json: "provider": { "${model.providerID}": { "models": { "${model.modelID}": { "cost": { "input": 3, ` +
      `"output": 15 } } } } } (USD per million tokens), or run without the cap: it comes from --max-cost or from ` +
      "budget in a lathe.json (a project's own file too, even untrusted, since a cap only narrows; lathe config shows " +
      "which file sets it)."
  })
}

/**
 * Output tokens every call under a budget may write: a call the budget cannot give this many (or its own smaller
 * limit) is refused rather than sent to be cut off at once.
 */
export const MIN_OUTPUT_TOKENS = 1_024
/** A call's output limit when neither the request nor the catalogue gives one (the provider SDKs' own default). */
const DEFAULT_OUTPUT_TOKENS = 4_096
/**
 * Bytes of UTF-8 per token for the input estimate. Tokenizers average about 4 on English and code (3.5–4.5 measured
 * on Lathe's own requests); 3 keeps the estimate above the real count except for text that tokenizes unusually badly.
 */
const BYTES_PER_TOKEN = 3
/**
 * Tokens counted for an image: above what a provider counts for one (Anthropic about 1,600 once it has scaled the
 * image down, OpenAI's high detail up to about 1,100 on GPT-4o and 2,500 on its mini models' patches).
 */
const IMAGE_TOKENS = 2_500
/** Tokens counted for a PDF page: its text and the page as an image, as Anthropic and Gemini read a PDF. */
const PDF_PAGE_TOKENS = 3_000
/** Tokens a provider adds around a request's content (role markers, the tool-use preamble when tools are offered). */
const REQUEST_OVERHEAD_TOKENS = 100
const TOOLS_OVERHEAD_TOKENS = 600

/** The bytes of a file part's data: a data URL, bare base64, raw bytes; undefined for a link. */
const fileBytes = (data: unknown): Uint8Array | undefined => {
  const inner = typeof data === "object" && data !== null && "data" in data ? (data as { data: unknown }).data : data
  if (inner instanceof Uint8Array) return inner
  if (inner instanceof ArrayBuffer) return new Uint8Array(inner)
  if (typeof inner !== "string" || /^https?:/.test(inner)) return undefined
  return Buffer.from(inner.startsWith("data:") ? inner.slice(inner.indexOf(",") + 1) : inner, "base64")
}

/** Tokens of an image or a file part: {@link IMAGE_TOKENS}; a PDF's pages; any other file's bytes as text. */
const mediaTokens = (mediaType: string, data: unknown): number => {
  if (mediaType.startsWith("image")) return IMAGE_TOKENS
  const bytes = fileBytes(data)
  if (bytes === undefined) return IMAGE_TOKENS
  if (mediaType !== "application/pdf") return bytes.byteLength / BYTES_PER_TOKEN
  // Page objects are `/Type /Page` (the page tree's are `/Type /Pages`); a PDF whose pages sit in compressed object
  // streams shows none, and is then counted by its bytes.
  const pages =
    Buffer.from(bytes)
      .toString("latin1")
      .match(/\/Type\s*\/Page(?![a-z])/g)?.length ?? 0
  return pages > 0 ? pages * PDF_PAGE_TOKENS : bytes.byteLength / BYTES_PER_TOKEN
}

/** Estimated tokens of a request's value: text by its UTF-8 bytes (keys too), images and files by their kind. */
const tokensOf = (value: unknown): number => {
  if (typeof value === "string") return Buffer.byteLength(value) / BYTES_PER_TOKEN
  if (value instanceof Uint8Array || value instanceof ArrayBuffer || value instanceof URL) return IMAGE_TOKENS
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + tokensOf(item), 0)
  if (typeof value === "object" && value !== null) {
    const part = value as { type?: unknown; mediaType?: unknown; data?: unknown; image?: unknown }
    if (part.type === "image") return IMAGE_TOKENS
    if (part.type === "file" && typeof part.mediaType === "string") return mediaTokens(part.mediaType, part.data)
    return Object.entries(value).reduce((sum, [key, item]) => sum + key.length / BYTES_PER_TOKEN + tokensOf(item), 0)
  }
  return typeof value === "number" || typeof value === "boolean" ? 2 : 0
}

/** The estimated input tokens of a request: its system prompt, messages and tool schemas, see {@link callPrice}. */
export const estimateInputTokens = (request: LLMRequest): number =>
  Math.ceil(
    tokensOf([request.system, request.messages, request.tools]) +
      REQUEST_OVERHEAD_TOKENS +
      (Object.keys(request.tools).length > 0 ? TOOLS_OVERHEAD_TOKENS : 0)
  )

/**
 * What one model call may cost (see {@link CallPrice}). The input is estimated to err high: text at
 * {@link BYTES_PER_TOKEN} bytes of UTF-8 a token (keys and tool schemas included), an image at {@link IMAGE_TOKENS},
 * a PDF at {@link PDF_PAGE_TOKENS} a page, plus the provider's framing; every token at the dearer of the input and
 * cache-write prices (a prompt-cache write costs more than plain input, a read less). The output: the request's
 * `maxOutputTokens`, else the model's output limit (at most what the context has room for after the input), at the
 * output price.
 */
export const callPrice = (request: LLMRequest): CallPrice => {
  const { cost, limit } = request.model
  const inputTokens = estimateInputTokens(request)
  const wanted = request.maxOutputTokens ?? (limit.output > 0 ? limit.output : DEFAULT_OUTPUT_TOKENS)
  // An output limit is sent where none may have been before: kept within what the context has room for after the
  // input, since some servers (vLLM, older OpenAI models) refuse a request whose input and limit pass the context.
  const room = limit.context > 0 ? Math.max(MIN_OUTPUT_TOKENS, limit.context - inputTokens) : wanted
  return {
    inputTokens,
    inputPrice: Math.max(cost.input, cost.cacheWrite) / 1_000_000,
    outputPrice: cost.output / 1_000_000,
    maxOutput: Math.min(wanted, room)
  }
}

/** The most a call can cost (USD): its input estimate and its whole output limit (see {@link callPrice}). */
export const estimateCost = (request: LLMRequest): number => {
  const price = callPrice(request)
  return price.inputTokens * price.inputPrice + price.maxOutput * price.outputPrice
}

/** How a call under a budget is metered. */
export interface CallMeter {
  /**
   * The call's stream, metered: its usage (the `finish-step` event) is priced at the model's prices, and the hold is
   * settled with it as soon as the stream ends, however it ends.
   */
  readonly watch: <E, R>(stream: Stream.Stream<LLMEvent, E, R>) => Stream.Stream<LLMEvent, E, R>
}

/**
 * One model call under `budget`: its price is held (see `BudgetLedger.reserve`), the request goes out with the hold's
 * output allowance as its `outputCap`, and the hold is settled when the call's stream ends (`meter.watch`), before
 * the tools it called (subagents) run on, or at the latest when `run` ends (a stream never started costs nothing). A
 * refused call is not sent: its `BudgetExhausted` is returned.
 */
export const budgetedCall = <A, E, R>(
  budget: BudgetLedger,
  request: LLMRequest,
  run: (request: LLMRequest, meter: CallMeter) => Effect.Effect<A, E, R>,
  options?: ReserveOptions
): Effect.Effect<A | BudgetExhausted, E, R> =>
  Effect.gen(function* () {
    const hold = yield* budget
      .reserve(callPrice(request), options)
      .pipe(Effect.catchTag("BudgetExhausted", (error) => Effect.succeed(error)))
    if (hold instanceof BudgetExhausted) return hold
    let actual = 0
    let inputSeen: number | undefined
    let settled = false
    const ended = Effect.suspend(() => {
      if (settled) return Effect.void
      settled = true
      return budget.settle(hold, actual, inputSeen)
    })
    const meter: CallMeter = {
      watch: (stream) =>
        stream.pipe(
          Stream.tap((event) =>
            Effect.sync(() => {
              if (event.type !== "finish-step") return
              const tokens = tokensFromUsage(event.usage)
              actual += stepCost(tokens, request.model)
              inputSeen = (inputSeen ?? 0) + tokens.input + tokens.cache.read + tokens.cache.write
            })
          ),
          Stream.ensuring(ended)
        )
    }
    return yield* run({ ...request, outputCap: hold.outputTokens }, meter).pipe(Effect.ensuring(ended))
  })

/** A subagent's summary for its caller, told when the turn's budget stopped it (its caller's next call is refused too). */
export const budgetStopNote = <T extends { readonly text: string }>(
  last: MessageWithParts,
  agent: string,
  result: T
): T => {
  if (last.info.role !== "assistant" || last.info.error?.name !== "BudgetExhausted") return result
  const stopped = `The ${agent} subagent was stopped: the turn's cost budget ran out.`
  return { ...result, text: result.text ? `${result.text}\n\n${stopped}` : stopped }
}

/** The message a refused call leaves: the turn's step message, ended with `BudgetExhausted`. */
export const exhaustedStep = (assistant: AssistantMessage, error: BudgetExhausted, now: number): AssistantMessage => ({
  ...assistant,
  error: budgetMessageError(error),
  time: { ...assistant.time, completed: now }
})

/**
 * The budget a turn runs under: its caller's for a subagent (`budget`), else, for a top-level session, one opened
 * from the run's and the config's caps with the session's earlier spending counted; none when no cap applies. A model
 * without a price is refused under a budget.
 */
export const turnBudget = Effect.fnUntraced(function* (
  services: { readonly store: SessionStore["Service"]; readonly config: { readonly info: ConfigInfo } },
  budgets: Budget["Service"],
  session: Session,
  model: ModelInfo,
  input: { readonly budget?: BudgetLedger; readonly maxCost?: number }
) {
  const { store, config } = services
  const opened =
    input.budget ??
    (session.parentID === undefined && (input.maxCost !== undefined || config.info.budget !== undefined)
      ? yield* budgets.open(budgetRequest(config.info, input.maxCost, yield* store.messages(session.id)))
      : undefined)
  if (opened !== undefined && !isPriced(model, config.info)) return yield* unpricedModel(model)
  return opened
})
