import { Tool } from "@lathe/plugin"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { toolSchema } from "./tool-schemas.js"
import { guardedFetch, type HostLookup, systemLookup } from "./webfetch-net.js"

/** Responses larger than this are refused. */
export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024
/** Seconds before a fetch gives up, unless the call says otherwise. */
export const DEFAULT_FETCH_TIMEOUT_S = 30
/** The longest timeout a call may ask for, in seconds. */
export const MAX_FETCH_TIMEOUT_S = 120

/** `webfetch` arguments. */
export const WebFetchInput = z.object({
  url: z.string().min(1).describe("The http:// or https:// URL to fetch"),
  format: z
    .enum(["text", "markdown", "html"])
    .default("markdown")
    .describe("How to return an HTML page: markdown (default), plain text, or the raw html"),
  timeout: z
    .number()
    .int()
    .min(1)
    .max(MAX_FETCH_TIMEOUT_S)
    .optional()
    .describe(`Seconds to wait (default ${DEFAULT_FETCH_TIMEOUT_S}, at most ${MAX_FETCH_TIMEOUT_S})`)
})
/** `webfetch` arguments, parsed. */
export type WebFetchInput = z.infer<typeof WebFetchInput>

// The HTML converters (and the DOM implementation under turndown) load on first use, not at start-up.

/** HTML to markdown with turndown: ATX headings, fenced code, scripts and styles dropped. */
export const htmlToMarkdown = async (html: string): Promise<string> => {
  const { default: TurndownService } = await import("turndown")
  const service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" })
  service.remove(["script", "style", "noscript", "iframe", "object", "embed"])
  return service.turndown(html)
}

/** HTML to readable plain text (html-to-text), scripts and styles dropped. */
export const htmlToText = async (html: string): Promise<string> => {
  const { convert } = await import("html-to-text")
  return convert(html, { wordwrap: false, selectors: [{ selector: "img", format: "skip" }] })
}

/** Reads a body up to `limit` bytes; throws once it is larger. */
const readCapped = async (response: Response, limit: number, url: string): Promise<Buffer> => {
  const tooLarge = () => new Error(`The response from ${url} is larger than the 5 MB limit.`)
  const declared = Number(response.headers.get("content-length") ?? "0")
  if (declared > limit) throw tooLarge()
  const chunks: Array<Uint8Array> = []
  let size = 0
  if (!response.body) return Buffer.alloc(0)
  for await (const chunk of response.body) {
    size += chunk.byteLength
    if (size > limit) {
      await response.body.cancel().catch(() => undefined)
      throw tooLarge()
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

const ACCEPT: Readonly<Record<WebFetchInput["format"], string>> = {
  markdown: "text/markdown;q=1.0, text/html;q=0.9, text/plain;q=0.8, */*;q=0.1",
  text: "text/plain;q=1.0, text/html;q=0.9, */*;q=0.1",
  html: "text/html;q=1.0, application/xhtml+xml;q=0.9, */*;q=0.1"
}

/** Options of {@link createWebFetchTool}. */
export interface WebFetchOptions {
  /**
   * Hosts (`host` or `host:port`) the person allows although they are on this machine or a private network: the
   * config's `webfetch.allow_private_hosts`. Everything else that is not a public address is refused.
   */
  readonly allowPrivateHosts?: ReadonlyArray<string> | undefined
  /** How host names are resolved (default: the system resolver); tests inject one. */
  readonly lookup?: HostLookup | undefined
}

/**
 * Builds the `webfetch` tool: asks `webfetch` with the URL, fetches it (5 MB cap) from public addresses only (each
 * redirect hop checked, the checked address pinned), converts HTML as asked.
 */
export const createWebFetchTool = (options: WebFetchOptions = {}) =>
  Tool.define("webfetch", {
    jsonSchema: toolSchema("webfetch"),
    description: loadDescription("webfetch"),
    parameters: WebFetchInput,
    mutates: false,
    execute: async (args, ctx) => {
      let url: URL
      try {
        url = new URL(args.url)
      } catch {
        throw new Error(`"${args.url}" is not a valid URL. Give a full URL such as https://example.com/page.`)
      }
      if (url.protocol !== "http:" && url.protocol !== "https:")
        throw new Error(`Only http:// and https:// URLs can be fetched; got ${url.protocol}`)
      await ctx.ask({ permission: "webfetch", patterns: [url.href], metadata: { url: url.href, format: args.format } })
      const seconds = args.timeout ?? DEFAULT_FETCH_TIMEOUT_S
      const timeout = AbortSignal.timeout(seconds * 1000)
      let response: Response
      let body: Buffer
      try {
        ;({ response } = await guardedFetch(url, {
          lookup: options.lookup ?? systemLookup,
          allowed: options.allowPrivateHosts ?? [],
          signal: AbortSignal.any([ctx.abort, timeout]),
          headers: { "user-agent": "Lathe (terminal coding agent)", accept: ACCEPT[args.format] }
        }))
        if (!response.ok)
          throw new Error(`Fetching ${url.href} failed with HTTP ${response.status} ${response.statusText}.`)
        body = await readCapped(response, MAX_RESPONSE_BYTES, url.href)
      } catch (error) {
        if (timeout.aborted) throw new Error(`Fetching ${url.href} timed out after ${seconds} s.`)
        if (error instanceof TypeError) {
          const cause = error.cause instanceof Error ? error.cause.message : error.message
          throw new Error(`Could not fetch ${url.href}: ${cause}`)
        }
        throw error
      }
      const type = (response.headers.get("content-type") ?? "").toLowerCase()
      const title = `${url.href} (${type.split(";")[0] || "unknown type"})`
      if (type.startsWith("image/")) {
        const mime = type.split(";")[0] ?? "image/png"
        return {
          title,
          output: `Fetched an image (${mime}, ${body.length} bytes); it is attached.`,
          attachments: [{ mime, url: `data:${mime};base64,${body.toString("base64")}` }]
        }
      }
      const text = body.toString("utf8")
      const html = type.includes("html") || /^\s*<(!doctype html|html)/i.test(text)
      const output =
        !html || args.format === "html"
          ? text
          : args.format === "markdown"
            ? await htmlToMarkdown(text)
            : await htmlToText(text)
      return { title, output, metadata: { status: response.status, contentType: type, bytes: body.length } }
    }
  })
