import type { LanguageModelV4StreamPart } from "@ai-sdk/provider"
import type { LanguageModelMiddleware } from "ai"
import type { ProviderDescriptor, ProviderOptions } from "./descriptor.js"
import { budgetOf, promptFamilyOf, reasoningLevelOf } from "./families.js"
import { sdkSettings } from "./sdk-settings.js"

/** OpenRouter's cache breakpoint: its SDK turns it into `cache_control` on the marked message, part or tool. */
const OPENROUTER_CACHE_MARK: ProviderOptions = { openrouter: { cacheControl: { type: "ephemeral" } } }

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
 * OpenRouter, one key for many vendors' models (`anthropic/claude-sonnet-4.6`, `openai/gpt-5`, …), through its own
 * SDK over Chat Completions. The prompt and caching follow the routed model: Claude models take `cache_control`
 * breakpoints (OpenRouter passes them to Anthropic), the others cache on their own. Usage comes back with the cost
 * OpenRouter charged and the cached tokens; `compatibility: "strict"` asks for it on every stream.
 */
export const openrouter: ProviderDescriptor = {
  type: "openrouter",
  name: "OpenRouter",
  catalogID: "openrouter",
  auth: "key",
  keyEnv: ["OPENROUTER_API_KEY"],
  defaultModel: "anthropic/claude-sonnet-4.6",
  imagesInToolResults: true,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  cache: (modelID) =>
    modelID.toLowerCase().includes("claude") ? { kind: "breakpoints", mark: OPENROUTER_CACHE_MARK } : undefined,
  reasoning: (model, reasoning) => ({
    openrouter: {
      reasoning:
        typeof reasoning === "string"
          ? { effort: reasoningLevelOf(reasoning) }
          : { max_tokens: budgetOf(model, reasoning) }
    }
  }),
  load: async (settings, modelID) => {
    const [{ createOpenRouter }, { wrapLanguageModel }] = await Promise.all([
      import("@openrouter/ai-sdk-provider"),
      import("ai")
    ])
    const settingsForSDK = { compatibility: "strict", ...sdkSettings(settings) }
    const model = createOpenRouter(settingsForSDK as Parameters<typeof createOpenRouter>[0]).chat(modelID)
    return wrapLanguageModel({ model, middleware: cacheWritesOutOfInput })
  },
  hints: { key: "create a key at https://openrouter.ai/settings/keys" }
}
