import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

/** A request a fake service received. */
export interface ServiceRequest {
  readonly method: string
  readonly url: URL
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
}

/** What a fake service answers: a status and a JSON body. */
export interface ServiceReply {
  readonly status?: number
  readonly body: unknown
}

/** A running fake service on 127.0.0.1. */
export interface FakeService {
  readonly url: string
  readonly requests: ReadonlyArray<ServiceRequest>
  readonly close: () => Promise<void>
}

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that answers every request with `reply(request)` as JSON and
 * records what it got: stands in for SearxNG, Brave, Exa, Tavily, GitHub and Sourcegraph, each speaking its own API.
 */
export const startService = async (reply: (request: ServiceRequest) => ServiceReply): Promise<FakeService> => {
  const requests: Array<ServiceRequest> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      let body: unknown = text
      try {
        body = text === "" ? undefined : JSON.parse(text)
      } catch {}
      const request = {
        method: req.method ?? "GET",
        url: new URL(req.url ?? "/", "http://127.0.0.1"),
        headers: req.headers,
        body
      }
      requests.push(request)
      const answer = reply(request)
      res.writeHead(answer.status ?? 200, { "content-type": "application/json" })
      res.end(JSON.stringify(answer.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
