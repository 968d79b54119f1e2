/**
 * @lathe/plugin/schema: the message model and the event catalogue as Effect schemas, and nothing else.
 *
 * This entry evaluates only `effect`: what a session, a message, a part and an event are, for a plugin that decodes
 * them, for Lathe's host (which stores and announces them) and for clients of a Lathe server (`@lathe/sdk`).
 */
export * from "./events.js"
export * from "./message.js"
export * from "./part.js"
export type { PromptPart } from "./prompt-part.js"
