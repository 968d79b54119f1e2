/**
 * @lathe/sdk: typed clients for a Lathe server (`lathe serve`). `createLatheClient` is the Promise client,
 * `makeLatheClient` the Effect client; both are derived from `LatheApi`, the definition the server implements.
 */
export * from "./api.js"
export * from "./client.js"
export * from "./errors.js"
export * from "./events.js"
export type * from "./parts.js"
export * from "./promise-client.js"
export * from "./sse.js"
