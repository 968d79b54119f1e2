import type { ClientRequest } from "node:http"

/**
 * Calls `then` once, after the next outgoing HTTP request of this process has been written out (`node:http`'s request
 * `finish`; a request through the global `fetch` once undici has sent its body), on a later turn of the event loop,
 * so that work started there runs while the request is out instead of before it. Any request counts, a model's or
 * not: what waits for one is work that may run later, never work that needs the request. Returns a function that
 * calls `then` at once if it has not run yet (for work someone needs now, or when no request comes).
 *
 * `lathe run` loads its terminal renderer after its first request this way; the loop records the tree after a step
 * after the next one.
 */
export const afterNextRequestSent = (then: () => void): (() => void) => {
  const channels = process.getBuiltinModule("node:diagnostics_channel")
  let done = false
  const fire = () => {
    if (done) return
    done = true
    channels.unsubscribe("http.client.request.start", onHttp)
    channels.unsubscribe("undici:request:bodySent", onUndici)
    then()
  }
  const later = () => setImmediate(fire)
  const onHttp = (message: unknown) => {
    const request = (message as { request?: ClientRequest }).request
    if (request === undefined || request.writableFinished) later()
    else request.once("finish", later)
  }
  const onUndici = () => later()
  channels.subscribe("http.client.request.start", onHttp)
  channels.subscribe("undici:request:bodySent", onUndici)
  return fire
}
