import type { ProviderDescriptor } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
import { sdkSettings } from "./sdk-settings.js"

/**
 * Any server that speaks OpenAI's Chat Completions (vLLM, llama.cpp, a company gateway, Ollama or LM Studio when
 * configured this way). It needs a `baseURL`; a key is sent as the bearer token when there is one.
 */
export const openaiCompatible: ProviderDescriptor = {
  type: "openai-compatible",
  name: "OpenAI-compatible server",
  catalogID: "openai-compatible",
  auth: "optional",
  keyEnv: [],
  detectEnv: [],
  baseURL: { required: true },
  imagesInToolResults: false,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  reasoning: (_model, reasoning) => ({ openaiCompatible: { reasoningEffort: reasoningLevelOf(reasoning) } }),
  load: async (settings, modelID) => {
    const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible")
    return createOpenAICompatible({
      ...sdkSettings(settings),
      name: settings.id,
      baseURL: settings.baseURL ?? "",
      includeUsage: true
    } as Parameters<typeof createOpenAICompatible>[0])(modelID)
  },
  hints: { connect: "check that the server is running and that baseURL ends where its /chat/completions lives" }
}
