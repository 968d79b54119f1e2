import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { RecordedRequest, ScriptedReply } from "@lathe/core/testing"
import type { LatheEvent } from "@lathe/plugin/schema"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

/** A running `lathe serve` process. */
export interface ServeProcess {
  readonly url: string
  /** The token the server made for itself and printed (`token <token>`), when it was given none. */
  readonly token: string | undefined
  readonly child: ChildProcess
  /** When the `listening on` line arrived (`performance.now()`). */
  readonly listeningAt: number
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>
}

/** Starts the real `lathe serve` (from source) and resolves once it printed `listening on URL`. */
export const startServe = (
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: Record<string, string>; readonly timeoutMs?: number }
): Promise<ServeProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=@lathe/source", "--import", tsx, bin, "serve", ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`lathe serve did not start\nstdout:\n${stdout}\nstderr:\n${stderr}`))
    }, options.timeoutMs ?? 30_000)
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      const match = /^listening on (http:\/\/\S+)\n/.exec(stdout)
      if (match?.[1] && timer.hasRef()) {
        clearTimeout(timer)
        timer.unref()
        resolve({
          url: match[1],
          token: /^token (\S+)$/m.exec(stdout)?.[1],
          child,
          listeningAt: performance.now(),
          stdout: () => stdout,
          stderr: () => stderr,
          exited
        })
      }
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    exited.then((code) => {
      if (!timer.hasRef()) return
      clearTimeout(timer)
      reject(new Error(`lathe serve exited with ${code} before listening\nstdout:\n${stdout}\nstderr:\n${stderr}`))
    })
  })

/** One parsed Server-Sent Event. */
export interface SseEvent {
  readonly id: string | undefined
  readonly event: string | undefined
  readonly data: LatheEvent
}

/** A subscription to `GET /events` with a plain SSE parser: collects events and comments as they come. */
export interface EventReader {
  readonly events: Array<SseEvent>
  readonly comments: Array<string>
  /** Resolves with the first event (already received or coming) that matches, or rejects after `timeoutMs`. */
  readonly waitFor: (match: (event: SseEvent) => boolean, timeoutMs?: number) => Promise<SseEvent>
  /** Drops the connection. */
  readonly close: () => void
  /** Resolves when the server ended the stream (or the connection closed). */
  readonly ended: Promise<void>
}

/** Opens `GET /events` (with `headers`, e.g. a token or `Last-Event-ID`) and parses its frames. */
export const readEvents = async (url: string, headers: Record<string, string> = {}): Promise<EventReader> => {
  const controller = new AbortController()
  const response = await fetch(url, { headers, signal: controller.signal })
  if (!response.ok || !response.body) throw new Error(`GET ${url} answered ${response.status}`)
  const events: Array<SseEvent> = []
  const comments: Array<string> = []
  const waiters = new Set<() => void>()
  const decoder = new TextDecoder()
  const reader = response.body.getReader()
  const ended = (async () => {
    let buffer = ""
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const fields: Record<string, string> = {}
          for (const line of frame.split("\n")) {
            if (line.startsWith(":")) comments.push(line.slice(1).trim())
            const colon = line.indexOf(":")
            if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart()
          }
          if (fields.data !== undefined)
            events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) as LatheEvent })
          for (const wake of waiters) wake()
        }
      }
    } catch {
      // aborted by close()
    }
    for (const wake of waiters) wake()
  })()
  const waitFor = (match: (event: SseEvent) => boolean, timeoutMs = 20_000) =>
    new Promise<SseEvent>((resolve, reject) => {
      const check = () => {
        const found = events.find(match)
        if (!found) return false
        waiters.delete(check)
        clearTimeout(timer)
        resolve(found)
        return true
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`no matching event in ${timeoutMs} ms; got: ${events.map((e) => e.event).join(", ")}`))
      }, timeoutMs)
      if (!check()) waiters.add(check)
    })
  return { events, comments, waitFor, close: () => controller.abort(), ended }
}

/** The text of the last user message of a chat.completions request (a test's scenario marker lives there). */
export const lastUserText = (request: RecordedRequest): string => {
  const body = request.body as { messages?: Array<{ role: string; content: unknown }> }
  const user = body.messages?.findLast((m) => m.role === "user")
  const content = user?.content
  return typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((c: { text?: string }) => c.text ?? "").join("")
      : ""
}

/** How many tool results follow the last user message (which step of a scripted turn this is). */
export const toolResults = (request: RecordedRequest): number => {
  const messages = (request.body as { messages?: Array<{ role: string }> }).messages ?? []
  const lastUser = messages.findLastIndex((m) => m.role === "user")
  return messages.slice(lastUser + 1).filter((m) => m.role === "tool").length
}

/** A scripted model that answers each scenario by the `[marker]` in its last user message. */
export const byScenario =
  (scenarios: Record<string, (request: RecordedRequest, step: number) => ScriptedReply>) =>
  (request: RecordedRequest): ScriptedReply | undefined => {
    const marker = /\[([a-z0-9-]+)\]/.exec(lastUserText(request))?.[1]
    const scenario = marker === undefined ? undefined : scenarios[marker.replace(/-\d+$/, "")]
    return scenario?.(request, toolResults(request))
  }
