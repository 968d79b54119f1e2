import type { Message, Part, ReasoningPart, Session, TextPart } from "@lathe/plugin/schema"
import { toolEventType } from "@lathe/plugin/schema"
import { Context, Effect, Layer, Option } from "effect"
import { maskDeep, SecretMask } from "../config/secret-mask.js"
import { Bus } from "../contracts/bus.js"
import { SessionStore, type StoreError } from "./session-store.js"

/** How {@link SessionWriter}'s `putPart` writes and announces a part. */
export interface PutPartOptions {
  /** Write the part out (flush the store) before announcing it: a mutating tool call's result. Default false. */
  readonly durable?: boolean
  /**
   * Whether a tool part's write is a step of its call's life, announced as `tool.<status>` after `part.updated`.
   * Default true; false for a write that is not news about the call: pruning an old output, settling a call a dead
   * process left open, or a pending part already announced when its input began streaming.
   */
  readonly toolEvent?: boolean
}

/**
 * The one write path for session state: each method stores a change and then announces exactly what was stored on
 * the Bus, so storing and announcing are one act. A subscriber that sees an event finds its row in the store.
 * Reads stay on {@link SessionStore}; events that mirror no write (`session.status`, `step.started`, asks, notices)
 * are published on the Bus directly.
 *
 * With a {@link SecretMask} in context, every known secret value is masked in what is stored and announced (sessions,
 * messages, parts, streamed deltas), and error text (a message's error, a failed tool call's) has credential shapes
 * masked too: `lathe session show`, exports and every event subscriber see the masks, never the secret. A secret split
 * across two streamed deltas is masked only in the part, once it is written whole.
 */
export class SessionWriter extends Context.Service<
  SessionWriter,
  {
    /** Stores a new session and announces `session.created` (`callID`: the parent's call that started a child). */
    readonly createSession: (
      session: Session,
      options?: { readonly callID?: string }
    ) => Effect.Effect<void, StoreError>
    /**
     * Stores a changed session and announces `session.updated`; `durable` flushes the store first (another
     * connection to the store reads the session as soon as it hears of it).
     */
    readonly updateSession: (
      session: Session,
      options?: { readonly durable?: boolean }
    ) => Effect.Effect<void, StoreError>
    /** Deletes a session with its messages, parts and child sessions, and announces `session.deleted`. */
    readonly deleteSession: (sessionID: string) => Effect.Effect<void, StoreError>
    /** Stores a message (new or changed) and announces `message.updated`. */
    readonly putMessage: (message: Message) => Effect.Effect<void, StoreError>
    /** Removes a message with its parts and announces `message.removed`. */
    readonly removeMessage: (sessionID: string, messageID: string) => Effect.Effect<void, StoreError>
    /**
     * Stores a part (new or changed) and announces `part.updated`; for a tool part also `tool.<status>` of its
     * state (unless `toolEvent: false`). `durable` flushes the store before announcing.
     */
    readonly putPart: (part: Part, options?: PutPartOptions) => Effect.Effect<void, StoreError>
    /** Removes a part and announces `part.removed`. */
    readonly removePart: (sessionID: string, messageID: string, partID: string) => Effect.Effect<void, StoreError>
    /**
     * Streaming: stores a text or reasoning part that grew by `delta` and announces only the appended text as
     * `part.delta` (nothing when `delta` is empty). The full part is announced by the next `putPart`. The store
     * batches these writes; no flush, no extra event.
     */
    readonly delta: (part: TextPart | ReasoningPart, delta: string) => Effect.Effect<void, StoreError>
    /** Writes out anything the store batched. */
    readonly flush: Effect.Effect<void, StoreError>
  }
>()("@lathe/core/SessionWriter") {
  /** The writer over the `SessionStore` and `Bus` in context, bound once. */
  static readonly layer = Layer.effect(
    SessionWriter,
    Effect.gen(function* () {
      const store = yield* SessionStore
      const bus = yield* Bus
      const secrets = Option.getOrUndefined(yield* Effect.serviceOption(SecretMask))
      const values = <A>(value: A): A => (secrets === undefined ? value : maskDeep(value, secrets.values))
      const maskMessage = (message: Message): Message => {
        const masked = values(message)
        if (secrets === undefined || masked.role !== "assistant" || masked.error === undefined) return masked
        const error = maskDeep(masked.error, secrets.errors)
        return error === masked.error ? masked : { ...masked, error }
      }
      const maskPart = (part: Part): Part => {
        const masked = values(part)
        if (secrets === undefined || masked.type !== "tool" || masked.state.status !== "error") return masked
        const error = secrets.errors(masked.state.error)
        return error === masked.state.error ? masked : { ...masked, state: { ...masked.state, error } }
      }

      const createSession = Effect.fn("SessionWriter.createSession")(function* (
        given: Session,
        options: { readonly callID?: string } = {}
      ) {
        const session = values(given)
        yield* store.putSession(session)
        yield* bus.publish({
          type: "session.created",
          session,
          ...(options.callID !== undefined ? { callID: options.callID } : {})
        })
      })
      const updateSession = Effect.fn("SessionWriter.updateSession")(function* (
        given: Session,
        options: { readonly durable?: boolean } = {}
      ) {
        const session = values(given)
        yield* store.putSession(session)
        if (options.durable === true) yield* store.flush
        yield* bus.publish({ type: "session.updated", session })
      })
      const deleteSession = Effect.fn("SessionWriter.deleteSession")(function* (sessionID: string) {
        yield* store.deleteSession(sessionID)
        yield* bus.publish({ type: "session.deleted", sessionID })
      })
      // The two writes of every streamed step (several per step) carry no span of their own: a span per write cost the
      // loop measurably (bench/loop.ts); the step's and the tool call's spans cover them.
      const putMessage = Effect.fnUntraced(function* (given: Message) {
        const message = maskMessage(given)
        yield* store.putMessage(message)
        yield* bus.publish({ type: "message.updated", message })
      })
      const removeMessage = Effect.fn("SessionWriter.removeMessage")(function* (sessionID: string, messageID: string) {
        yield* store.removeMessage(sessionID, messageID)
        yield* bus.publish({ type: "message.removed", sessionID, messageID })
      })
      const putPart = Effect.fnUntraced(function* (given: Part, options: PutPartOptions = {}) {
        const part = maskPart(given)
        yield* store.putPart(part)
        if (options.durable === true) yield* store.flush
        yield* bus.publish({ type: "part.updated", part })
        if (part.type === "tool" && options.toolEvent !== false)
          yield* bus.publish({
            type: toolEventType(part.state.status),
            sessionID: part.sessionID,
            messageID: part.messageID,
            partID: part.id,
            callID: part.callID,
            tool: part.tool,
            state: part.state
          })
      })
      const removePart = Effect.fn("SessionWriter.removePart")(function* (
        sessionID: string,
        messageID: string,
        partID: string
      ) {
        yield* store.removePart(sessionID, messageID, partID)
        yield* bus.publish({ type: "part.removed", sessionID, messageID, partID })
      })
      // Once per streamed chunk: no span, and no more work than the write and the publish it replaces (only the chunk is
      // masked; the whole part is, when `putPart` writes it at the end).
      const delta = (part: TextPart | ReasoningPart, chunk: string): Effect.Effect<void, StoreError> => {
        const text = secrets === undefined ? chunk : secrets.values(chunk)
        const stored = text === chunk ? part : values(part)
        return text.length === 0
          ? store.putPart(stored)
          : Effect.andThen(
              store.putPart(stored),
              bus.publish({
                type: "part.delta",
                sessionID: part.sessionID,
                messageID: part.messageID,
                partID: part.id,
                field: "text",
                delta: text
              })
            )
      }

      return SessionWriter.of({
        createSession,
        updateSession,
        deleteSession,
        putMessage,
        removeMessage,
        putPart,
        removePart,
        delta,
        flush: store.flush
      })
    })
  )
}
