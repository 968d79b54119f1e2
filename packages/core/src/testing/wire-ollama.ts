import { createServer, request as httpRequest, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { type RecordedRequest, type ScriptedServer, type ServerScript, startScriptedServer } from "./scripted-server.js"

/** A model a local server has: its id, and what its listings say about it. */
export interface LocalModel {
  readonly id: string
  /** Context window, listed by LM Studio's `/api/v0/models` as `max_context_length`. */
  readonly context?: number
  /** LM Studio's kind of model (default `llm`); embedding models are listed too. */
  readonly type?: "llm" | "vlm" | "embeddings"
  /** Ollama's `details.parameter_size` and `details.quantization_level` (`"8.2B"`, `"Q4_K_M"`). */
  readonly parameterSize?: string
  readonly quantization?: string
}

/** Which local server to imitate, what it has, and how its chat completions answer. */
export interface LocalWireOptions {
  /**
   * `ollama` serves `GET /api/tags` and `GET /v1/models`; `lmstudio` serves `GET /v1/models` and (unless
   * `nativeListing` is false) `GET /api/v0/models`.
   */
  readonly kind: "ollama" | "lmstudio"
  readonly models: ReadonlyArray<LocalModel>
  /** Whether LM Studio's `/api/v0/models` answers (older versions and other servers: 404). Default true. */
  readonly nativeListing?: boolean
  /** The replies of `POST /v1/chat/completions` (see `startScriptedServer`). Default: none (every POST fails). */
  readonly script?: ServerScript
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

/** The JSON a listing route answers, or `undefined` when this server has no such route. */
const listing = (options: LocalWireOptions, path: string): unknown => {
  const { kind, models } = options
  if (path === "/v1/models")
    return {
      object: "list",
      data: models.map((model) => ({ id: model.id, object: "model", created: 1_700_000_000, owned_by: kind }))
    }
  if (kind === "ollama" && path === "/api/tags")
    return {
      models: models.map((model) => ({
        name: model.id,
        model: model.id,
        modified_at: "2026-01-01T00:00:00Z",
        size: 4_000_000_000,
        digest: "0".repeat(64),
        details: {
          format: "gguf",
          family: model.id.split(/[:.-]/)[0],
          ...(model.parameterSize === undefined ? {} : { parameter_size: model.parameterSize }),
          ...(model.quantization === undefined ? {} : { quantization_level: model.quantization })
        }
      }))
    }
  if (kind === "lmstudio" && path === "/api/v0/models" && options.nativeListing !== false)
    return {
      object: "list",
      data: models.map((model) => ({
        id: model.id,
        object: "model",
        type: model.type ?? "llm",
        publisher: "lmstudio-community",
        arch: "qwen3",
        compatibility_type: "gguf",
        quantization: "Q4_K_M",
        state: "not-loaded",
        ...(model.context === undefined ? {} : { max_context_length: model.context })
      }))
    }
  return undefined
}

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that imitates a local model server, Ollama or LM Studio: its
 * model listings as each documents them, and `POST /v1/chat/completions` answered by a `startScriptedServer` behind
 * it (streamed Chat Completions SSE with tool calls and usage). Every request is recorded, GETs included. Its `url`
 * ends with `/v1`.
 */
export const startLocalWireServer = async (options: LocalWireOptions): Promise<ScriptedServer> => {
  const chat = await startScriptedServer(options.script ?? [])
  const chatPort = new URL(chat.url).port
  const requests: Array<RecordedRequest> = []
  const server = createServer((req, res) => {
    const receivedAt = performance.now()
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const raw = Buffer.concat(chunks)
      let body: unknown = raw.toString("utf8")
      try {
        body = JSON.parse(raw.toString("utf8"))
      } catch {}
      const path = req.url ?? "/"
      const recorded: RecordedRequest = { method: req.method ?? "GET", path, headers: req.headers, body, receivedAt }
      requests.push(recorded)
      res.on("finish", () => {
        recorded.answeredAt = performance.now()
      })
      if (req.method === "GET") {
        const answer = listing(options, path.split("?")[0] ?? path)
        if (answer === undefined) return json(res, 404, { error: `no route ${path}` })
        return json(res, 200, answer)
      }
      if (req.method !== "POST" || path !== "/v1/chat/completions")
        return json(res, 404, { error: { message: `no route ${req.method} ${path}` } })
      const forward = httpRequest(
        { host: "127.0.0.1", port: chatPort, method: "POST", path, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        }
      )
      forward.on("error", () => res.destroy())
      forward.end(raw)
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
        server.close(() => void chat.close().then(resolve))
      })
  }
}
