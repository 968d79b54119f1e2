import { writeFile } from "node:fs/promises"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import type { RecordedRequest } from "./scripted-server.js"

/** Gemini's `usageMetadata`: `prompt` includes `cached`; `candidates` excludes `thoughts`. */
export interface GeminiUsage {
  readonly prompt: number
  readonly candidates: number
  readonly thoughts?: number
  readonly cached?: number
}

/**
 * One streamed `GenerateContentResponse` reply: thoughts (sent as `thought: true` parts), then a function call or
 * text, then the usage (default 10 prompt and 5 candidate tokens) on the last chunk with `finishReason: "STOP"`.
 */
export interface GeminiReply {
  readonly thought?: string
  readonly text?: string
  /** The function call; `signature` is sent as the part's `thoughtSignature`, as Gemini 3 signs its calls. */
  readonly tool?: { readonly name: string; readonly input: unknown; readonly signature?: string }
  readonly usage?: GeminiUsage
}

/** The script of a Gemini server: one reply per request, or a function of the request and its 0-based index. */
export type GeminiScript = ReadonlyArray<GeminiReply> | ((request: RecordedRequest, index: number) => GeminiReply)

/** A running Gemini wire server. */
export interface GeminiServer {
  /** `http://127.0.0.1:<port>`: append `/v1beta` for the Gemini API's `baseURL`. */
  readonly origin: string
  /** Every request, token exchanges included, in order. */
  readonly requests: ReadonlyArray<RecordedRequest>
  /**
   * Writes an `external_account` application-default-credentials file (and the subject token it reads) into `dir`
   * whose token exchange is this server's `POST /token`, answered with `accessToken`; returns the file's path, for
   * `GOOGLE_APPLICATION_CREDENTIALS`. google-auth-library then authorises requests with `Bearer <accessToken>`,
   * as it would with a real workload-identity file, without reaching Google.
   */
  readonly credentialsFile: (dir: string) => Promise<string>
  readonly close: () => Promise<void>
}

/** The access token `POST /token` grants. */
export const GEMINI_WIRE_ACCESS_TOKEN = "ya29.lathe-wire-test"

const usageMetadata = (usage: GeminiUsage) => ({
  promptTokenCount: usage.prompt,
  candidatesTokenCount: usage.candidates,
  totalTokenCount: usage.prompt + usage.candidates + (usage.thoughts ?? 0),
  ...(usage.thoughts === undefined ? {} : { thoughtsTokenCount: usage.thoughts }),
  ...(usage.cached === undefined ? {} : { cachedContentTokenCount: usage.cached }),
  promptTokensDetails: [{ modality: "TEXT", tokenCount: usage.prompt }]
})

/** The model id of a `…/models/<id>:streamGenerateContent` path. */
const modelOf = (path: string) => /\/models\/([^/:?]+):/.exec(path)?.[1] ?? "gemini-scripted"

/** Streams `reply` as `data:` events of `GenerateContentResponse` chunks, as `?alt=sse` does. */
const playGemini = (res: ServerResponse, reply: GeminiReply, index: number, model: string) => {
  const chunk = (parts: ReadonlyArray<Record<string, unknown>>, last: boolean) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
    ...(last ? { usageMetadata: usageMetadata(reply.usage ?? { prompt: 10, candidates: 5 }) } : {}),
    modelVersion: model,
    responseId: `resp_${index}`
  })
  res.writeHead(200, { "content-type": "text/event-stream" })
  const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\r\n\r\n`)
  if (reply.thought !== undefined) send(chunk([{ text: reply.thought, thought: true }], false))
  if (reply.tool) {
    const { name, input, signature } = reply.tool
    const call = {
      functionCall: { name, args: input },
      ...(signature === undefined ? {} : { thoughtSignature: signature })
    }
    send(chunk([call], true))
  } else {
    const text = reply.text ?? ""
    const half = Math.floor(text.length / 2)
    send(chunk([{ text: text.slice(0, half) }], false))
    send(chunk([{ text: text.slice(half) }], true))
  }
  res.end()
}

/** Answers an OAuth 2.0 token exchange (RFC 8693) as Google's STS does. */
const grantToken = (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "application/json" })
  res.end(
    JSON.stringify({
      access_token: GEMINI_WIRE_ACCESS_TOKEN,
      issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
      token_type: "Bearer",
      expires_in: 3600
    })
  )
}

const record = (req: IncomingMessage, text: string, receivedAt: number): RecordedRequest => {
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { method: req.method ?? "GET", path: req.url ?? "/", headers: req.headers, body, receivedAt }
}

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that speaks the Gemini API's streaming wire format: any
 * `POST …/models/<model>:streamGenerateContent` (the Gemini API's `/v1beta/models/…`, Vertex's
 * `/v1beta1/projects/<p>/locations/<l>/publishers/google/models/…`) gets the next scripted reply as SSE, and
 * `POST /token` grants an access token (see `credentialsFile`). A request past the script's end gets the last reply
 * again.
 */
export const startGeminiServer = async (script: GeminiScript): Promise<GeminiServer> => {
  const requests: Array<RecordedRequest> = []
  let replies = 0
  const server = createServer((req, res) => {
    const receivedAt = performance.now()
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const recorded = record(req, Buffer.concat(chunks).toString("utf8"), receivedAt)
      requests.push(recorded)
      res.on("finish", () => {
        recorded.answeredAt = performance.now()
      })
      if (recorded.path === "/token") return grantToken(res)
      const index = replies++
      const reply = typeof script === "function" ? script(recorded, index) : (script[index] ?? script.at(-1) ?? {})
      playGemini(res, reply, index, modelOf(recorded.path))
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const credentialsFile = async (dir: string) => {
    const subject = join(dir, "google-subject-token")
    const file = join(dir, "google-credentials.json")
    await writeFile(subject, "lathe-wire-subject-token")
    const credentials = {
      type: "external_account",
      audience: "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/lathe/providers/wire",
      subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
      token_url: `${origin}/token`,
      credential_source: { file: subject }
    }
    await writeFile(file, JSON.stringify(credentials))
    return file
  }
  return {
    origin,
    requests,
    credentialsFile,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
