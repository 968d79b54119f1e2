/**
 * Whether a key works, asked with a request that costs nothing: listing the models (`GET <base>/models`) on the APIs
 * that have such a list. Providers without one (or whose SDK finds its own credentials) are "not verified".
 */
import type { ProviderDescriptor } from "@lathe/core/providers"

/** What the check found. */
export type Verdict =
  | { readonly kind: "verified"; readonly models: number }
  | { readonly kind: "rejected"; readonly status: number }
  | { readonly kind: "unverified"; readonly reason: string }

/** Where the OpenAI-style APIs list their models when config and the descriptor name no base URL. */
const OPENAI_STYLE: Readonly<Record<string, string>> = {
  openai: "https://api.openai.com/v1",
  groq: "https://api.groq.com/openai/v1",
  deepseek: "https://api.deepseek.com",
  xai: "https://api.x.ai/v1",
  mistral: "https://api.mistral.ai/v1",
  togetherai: "https://api.together.xyz/v1",
  fireworks: "https://api.fireworks.ai/inference/v1",
  cerebras: "https://api.cerebras.ai/v1",
  openrouter: "https://openrouter.ai/api/v1"
}

/** The request that lists models with `key`, or why there is none for this provider. */
const listRequest = (
  descriptor: ProviderDescriptor,
  key: string,
  baseURL: string | undefined
): { readonly url: string; readonly headers: Record<string, string> } | string => {
  const base = (url: string) => url.replace(/\/+$/, "")
  if (descriptor.type === "anthropic")
    return {
      url: `${base(baseURL ?? "https://api.anthropic.com/v1")}/models`,
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01" }
    }
  if (descriptor.type === "google")
    return {
      url: `${base(baseURL ?? "https://generativelanguage.googleapis.com/v1beta")}/models`,
      headers: { "x-goog-api-key": key }
    }
  const openaiStyle = baseURL ?? OPENAI_STYLE[descriptor.type]
  if (openaiStyle !== undefined && descriptor.auth !== "ambient" && descriptor.type !== "azure")
    return { url: `${base(openaiStyle)}/models`, headers: { authorization: `Bearer ${key}` } }
  return `${descriptor.name} has no free request to check a key with`
}

/**
 * Checks `key` against the provider at `baseURL` (config's, else the provider's usual address) within `timeoutMs`:
 * a 2xx is verified, a 401/403 rejected, anything else (unreachable, slow, another status) not verified.
 */
export const verifyKey = async (
  descriptor: ProviderDescriptor,
  key: string,
  baseURL: string | undefined,
  timeoutMs = 10_000
): Promise<Verdict> => {
  const request = listRequest(descriptor, key, baseURL)
  if (typeof request === "string") return { kind: "unverified", reason: request }
  try {
    const response = await fetch(request.url, { headers: request.headers, signal: AbortSignal.timeout(timeoutMs) })
    if (response.status === 401 || response.status === 403) return { kind: "rejected", status: response.status }
    if (!response.ok) return { kind: "unverified", reason: `${request.url} answered HTTP ${response.status}` }
    const body = (await response.json().catch(() => ({}))) as { data?: unknown; models?: unknown }
    const list = Array.isArray(body.data) ? body.data : Array.isArray(body.models) ? body.models : []
    return { kind: "verified", models: list.length }
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code
    return {
      kind: "unverified",
      reason: `could not reach ${new URL(request.url).host}${cause === undefined ? "" : ` (${cause})`}`
    }
  }
}
