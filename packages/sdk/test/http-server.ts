import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** A real HTTP server on 127.0.0.1 for the client tests; `close` ends open connections too. */
export interface TestServer {
  readonly url: string
  readonly close: () => Promise<void>
}

/** Starts a server on a free loopback port that answers every request with `handler`. */
export const serve = async (
  handler: (request: IncomingMessage, response: ServerResponse) => void | Promise<void>
): Promise<TestServer> => {
  const server = createServer((request, response) => {
    Promise.resolve(handler(request, response)).catch((error: unknown) => {
      response.destroy(error instanceof Error ? error : new Error(String(error)))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Answers with JSON. */
export const json = (response: ServerResponse, status: number, body: unknown): void => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

/** One SSE message carrying a Lathe event, as `lathe serve` frames it. */
export const sse = (id: string, event: { readonly type: string } & Record<string, unknown>): string =>
  `id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`

/** A `notice` event (the smallest event of the catalogue). */
export const notice = (message: string) => ({ type: "notice", level: "info", message }) as const

/** A free loopback port with nothing listening on it. */
export const closedPort = async (): Promise<string> => {
  const server = await serve(() => undefined)
  await server.close()
  return server.url
}
