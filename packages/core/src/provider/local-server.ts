import type { LanguageModelV4 } from "@ai-sdk/provider"
import type { ProviderSettings } from "./descriptor.js"

/**
 * What the local-server providers (Ollama, LM Studio) share: the server's root from its `/v1` base URL, a JSON GET
 * for model discovery, and the Chat Completions model their `/v1` API serves.
 */

/** How long discovery waits for a local server before giving up (it answers at once when it runs). */
const DISCOVERY_TIMEOUT_MS = 5_000

/** `url` without trailing slashes and without a trailing `/v1`: where a server's own (non-OpenAI) API lives. */
export const rootOf = (url: string): string => url.replace(/\/+$/, "").replace(/\/v1$/, "")

/** GETs `url` and parses its JSON body; rejects with a message naming the server (`who`) and what went wrong. */
export const fetchJSON = async (settings: ProviderSettings, url: string, who: string): Promise<unknown> => {
  let response: Response
  try {
    response = await settings.fetch(url, {
      headers: {
        accept: "application/json",
        ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
        ...settings.headers
      },
      signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS)
    })
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(`${who} did not answer at ${url} (${reason}).`)
  }
  if (!response.ok) throw new Error(`${who} answered ${url} with HTTP ${response.status}.`)
  return response.json()
}

/**
 * The Chat Completions model of a local server at `settings.baseURL` (its `/v1`), asking for usage in streams:
 * Lathe's own client (`chat-completions.ts`), the one every OpenAI-compatible server goes through.
 */
export const openAICompatibleModel = async (settings: ProviderSettings, modelID: string): Promise<LanguageModelV4> =>
  (await import("./chat-completions.js")).chatCompletionsModel(settings, modelID)
