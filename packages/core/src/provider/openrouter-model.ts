import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider"
import { type LanguageModelMiddleware, wrapLanguageModel } from "ai"
import type { ProviderSettings } from "./descriptor.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/**
 * OpenRouter's `prompt_tokens` counts cache writes as well as reads, and its SDK takes only the reads out of the
 * uncached input, so written tokens would be billed twice (as input and as cache writes). This takes them out too.
 */
const cacheWritesOutOfInput: LanguageModelMiddleware = {
  wrapStream: async ({ doStream }) => {
    const result = await doStream()
    const stream = result.stream.pipeThrough(
      new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
        transform(part, controller) {
          const input = part.type === "finish" ? part.usage.inputTokens : undefined
          if (part.type !== "finish" || !input?.cacheWrite || input.noCache === undefined)
            return controller.enqueue(part)
          const noCache = Math.max(0, input.noCache - input.cacheWrite)
          controller.enqueue({ ...part, usage: { ...part.usage, inputTokens: { ...input, noCache } } })
        }
      })
    )
    return { ...result, stream }
  }
}

/**
 * The OpenRouter chat model for `modelID`, usage corrected for cache writes. A module of its own, imported by the
 * descriptor's `load` only when OpenRouter is used: it names what it takes from `ai` (a bundle keeps only that), and
 * imports OpenRouter's SDK lazily, as every descriptor does.
 */
export const openrouterModel = async (settings: ProviderSettings, modelID: string): Promise<LanguageModelV4> => {
  const { createOpenRouter } = await importSDK(
    "@openrouter/ai-sdk-provider",
    "OpenRouter",
    () => import("@openrouter/ai-sdk-provider")
  )
  const settingsForSDK = { compatibility: "strict", ...sdkSettings(settings) }
  const model = createOpenRouter(settingsForSDK as Parameters<typeof createOpenRouter>[0]).chat(modelID)
  return wrapLanguageModel({ model, middleware: cacheWritesOutOfInput })
}
