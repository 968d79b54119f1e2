import { createHash, createHmac } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { RecordedRequest, ScriptedServer } from "./scripted-server.js"
import type { WireReply } from "./scripted-wire.js"

/** One Bedrock ConverseStream reply: optional reasoning, then text or a tool call, and the usage (default 10/5). */
export interface BedrockReply extends WireReply {
  /** Reasoning text streamed first (Claude's extended thinking), with a signature. */
  readonly reasoning?: string
}

/** The script of a Bedrock wire server: one reply per request, or a function of the request and its index. */
export type BedrockScript = ReadonlyArray<BedrockReply> | ((request: RecordedRequest, index: number) => BedrockReply)

/** AWS credentials a server checks SigV4 signatures against. */
export interface BedrockCredentials {
  readonly accessKeyId: string
  readonly secretAccessKey: string
}

/** What a Bedrock wire server checks besides its script. */
export interface BedrockWireOptions {
  /**
   * When set, every request must be signed with these credentials (SigV4, service `bedrock`, any region) or carry
   * `authorization: Bearer <bearer>`; anything else gets Bedrock's 403 (`UnrecognizedClientException` or
   * `InvalidSignatureException`).
   */
  readonly credentials?: BedrockCredentials
  readonly bearer?: string
}

const sha256 = (data: string) => createHash("sha256").update(data, "utf8").digest("hex")
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data, "utf8").digest()
const rfc3986 = (text: string) => text.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/**
 * Why a request's SigV4 signature does not hold for `credentials` (recomputed from the method, the path encoded twice
 * as for every service but S3, the signed headers and the body), or `undefined` when it holds.
 */
const signatureProblem = (
  method: string,
  path: string,
  headers: IncomingHttpHeaders,
  body: string,
  credentials: BedrockCredentials
): string | undefined => {
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      String(headers.authorization ?? "")
    )
  if (match === null) return "The request carries no SigV4 authorization header."
  const [, keyId, day = "", region = "", service = "", signed = "", signature] = match
  if (keyId !== credentials.accessKeyId) return "The security token included in the request is invalid."
  const [pathname = "", query = ""] = path.split("?")
  const canonicalPath = pathname
    .split("/")
    .map((segment) => rfc3986(encodeURIComponent(segment)))
    .join("/")
  const canonicalHeaders = signed
    .split(";")
    .map(
      (name) =>
        `${name}:${String(headers[name] ?? "")
          .trim()
          .replace(/\s+/g, " ")}\n`
    )
    .join("")
  const canonical = [method, canonicalPath, query, canonicalHeaders, signed, sha256(body)].join("\n")
  const scope = `${day}/${region}/${service}/aws4_request`
  const toSign = ["AWS4-HMAC-SHA256", String(headers["x-amz-date"] ?? ""), scope, sha256(canonical)].join("\n")
  const key = [day, region, service, "aws4_request"].reduce<Buffer | string>(
    (k, part) => hmac(k, part),
    `AWS4${credentials.secretAccessKey}`
  )
  if (createHmac("sha256", key).update(toSign, "utf8").digest("hex") !== signature)
    return "The request signature we calculated does not match the signature you provided."
  return undefined
}

type Encode = (eventType: string, payload: Record<string, unknown>) => Uint8Array

/** The event-stream frames of one reply, in the order Bedrock sends them. */
const frames = (reply: BedrockReply, index: number, encode: Encode): Array<Uint8Array> => {
  const usage = reply.usage ?? { input: 10, output: 5 }
  const out = [encode("messageStart", { role: "assistant" })]
  let block = 0
  if (reply.reasoning !== undefined) {
    out.push(
      encode("contentBlockDelta", { contentBlockIndex: block, delta: { reasoningContent: { text: reply.reasoning } } }),
      encode("contentBlockDelta", {
        contentBlockIndex: block,
        delta: { reasoningContent: { signature: `sig_${index}` } }
      }),
      encode("contentBlockStop", { contentBlockIndex: block })
    )
    block++
  }
  if (reply.tool) {
    const toolUseId = reply.tool.id ?? `tooluse_${index}`
    const input = JSON.stringify(reply.tool.input)
    const half = Math.floor(input.length / 2)
    out.push(
      encode("contentBlockStart", {
        contentBlockIndex: block,
        start: { toolUse: { toolUseId, name: reply.tool.name } }
      }),
      encode("contentBlockDelta", { contentBlockIndex: block, delta: { toolUse: { input: input.slice(0, half) } } }),
      encode("contentBlockDelta", { contentBlockIndex: block, delta: { toolUse: { input: input.slice(half) } } }),
      encode("contentBlockStop", { contentBlockIndex: block })
    )
  } else {
    // Bedrock starts text blocks with their first delta, not with a contentBlockStart.
    out.push(
      encode("contentBlockDelta", { contentBlockIndex: block, delta: { text: reply.text ?? "" } }),
      encode("contentBlockStop", { contentBlockIndex: block })
    )
  }
  out.push(
    encode("messageStop", { stopReason: reply.tool ? "tool_use" : "end_turn" }),
    encode("metadata", {
      usage: {
        inputTokens: usage.input,
        outputTokens: usage.output,
        totalTokens: usage.input + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0) + usage.output,
        ...(usage.cacheRead === undefined ? {} : { cacheReadInputTokens: usage.cacheRead }),
        ...(usage.cacheWrite === undefined ? {} : { cacheWriteInputTokens: usage.cacheWrite })
      },
      metrics: { latencyMs: 1 }
    })
  )
  return out
}

/** Why the server refuses `request` under `options` (its type and message, as Bedrock words them), if it does. */
const deniedBecause = (request: RecordedRequest, body: string, options: BedrockWireOptions) => {
  if (options.credentials === undefined && options.bearer === undefined) return undefined
  const authorization = String(request.headers.authorization ?? "")
  if (authorization.startsWith("Bearer ")) {
    if (options.bearer !== undefined && authorization === `Bearer ${options.bearer}`) return undefined
    return {
      type: "UnrecognizedClientException",
      message: "Invalid API Key format: Must start with pre-defined prefix"
    }
  }
  if (options.credentials === undefined) return { type: "UnrecognizedClientException", message: "Missing API key" }
  const problem = signatureProblem(request.method, request.path, request.headers, body, options.credentials)
  return problem === undefined ? undefined : { type: "InvalidSignatureException", message: problem }
}

const play = (res: ServerResponse, frameList: ReadonlyArray<Uint8Array>, index: number) => {
  res.writeHead(200, {
    "content-type": "application/vnd.amazon.eventstream",
    "x-amzn-requestid": `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`
  })
  for (const frame of frameList) res.write(frame)
  res.end()
}

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that speaks Amazon Bedrock's ConverseStream: it answers
 * `POST /model/{modelId}/converse-stream` with `application/vnd.amazon.eventstream` binary frames (messageStart,
 * content block deltas, messageStop, metadata with the usage incl. cache reads and writes), recording every request
 * with its headers (SigV4 or bearer `authorization`; with `options`, checked as Bedrock checks them). Its `url` is the endpoint root (no `/v1`), as Bedrock's
 * `baseURL` is. A request past the script's end gets the last reply again; any other path gets a 404 (and is recorded
 * too).
 */
export const startBedrockWireServer = async (
  script: BedrockScript,
  options: BedrockWireOptions = {}
): Promise<ScriptedServer> => {
  const { EventStreamCodec } = await import("@smithy/eventstream-codec")
  const { fromUtf8, toUtf8 } = await import("@smithy/util-utf8")
  const codec = new EventStreamCodec(toUtf8, fromUtf8)
  const encode: Encode = (eventType, payload) =>
    codec.encode({
      headers: {
        ":event-type": { type: "string", value: eventType },
        ":content-type": { type: "string", value: "application/json" },
        ":message-type": { type: "string", value: "event" }
      },
      // Bedrock pads every event with a `p` field so sizes do not leak content; the SDK drops it.
      body: fromUtf8(JSON.stringify({ ...payload, p: "abcdefgh" }))
    })
  const requests: Array<RecordedRequest> = []
  const server = createServer((req, res) => {
    const receivedAt = performance.now()
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
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
      res.on("finish", () => {
        recorded.answeredAt = performance.now()
      })
      const index = requests.length
      requests.push(recorded)
      if (req.method !== "POST" || !/^\/model\/[^/]+\/converse-stream$/.test(recorded.path)) {
        res.writeHead(404, { "content-type": "application/json", "x-amzn-errortype": "UnknownOperationException" })
        res.end(JSON.stringify({ message: `No Bedrock operation at ${req.method} ${recorded.path}` }))
        return
      }
      const denied = deniedBecause(recorded, text, options)
      if (denied !== undefined) {
        res.writeHead(403, { "content-type": "application/json", "x-amzn-errortype": denied.type })
        res.end(JSON.stringify({ message: denied.message }))
        return
      }
      const reply = typeof script === "function" ? script(recorded, index) : (script[index] ?? script.at(-1) ?? {})
      play(res, frames(reply, index, encode), index)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
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
