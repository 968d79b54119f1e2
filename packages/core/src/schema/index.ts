/**
 * @lathe/core/schema: the message model and the event catalogue as Effect schemas, and nothing else.
 *
 * This entry evaluates only `effect`: clients of a Lathe server (`@lathe/sdk`) decode sessions, messages, parts and
 * events with it without loading the agent loop, the providers or the tools.
 */
export * from "./events.js"
export * from "./message.js"
export * from "./part.js"
