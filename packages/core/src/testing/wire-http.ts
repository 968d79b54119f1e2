import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { RecordedRequest, ScriptedServer } from "./scripted-server.js"

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that records every request (path with query, headers, body
 * parsed as JSON when it is JSON) and lets `answer` write the reply. Its `url` ends with `/v1`.
 */
export const startRecordingServer = async (
  answer: (res: ServerResponse, request: RecordedRequest, index: number) => void
): Promise<ScriptedServer> => {
  const requests: Array<RecordedRequest> = []
  const server = createServer((req, res) => {
    const receivedAt = performance.now()
    const chunks: Array<Buffer> = []
    req.on("data", (part: Buffer) => chunks.push(part))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {}
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        headers: req.headers,
        body,
        receivedAt
      }
      const index = requests.length
      requests.push(recorded)
      res.on("finish", () => {
        recorded.answeredAt = performance.now()
      })
      answer(res, recorded, index)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** The `model` field of a request body, else `"scripted"`. */
export const modelOf = (request: RecordedRequest): string => {
  const model = (request.body as { model?: unknown } | undefined)?.model
  return typeof model === "string" ? model : "scripted"
}
