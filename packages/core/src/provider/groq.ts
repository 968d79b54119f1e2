import type { ProviderDescriptor } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/**
 * Groq's OpenAI-compatible API, through its own SDK (usage arrives in the stream's `x_groq` field). Reasoning: the
 * GPT-OSS models take an effort level; Qwen 3 only reasons or not (`default`), with its thinking parsed out of the
 * answer; other reasoning models have their thinking parsed out.
 */
export const groq: ProviderDescriptor = {
  type: "groq",
  name: "Groq",
  catalogID: "groq",
  auth: "key",
  keyEnv: ["GROQ_API_KEY"],
  defaultModel: "openai/gpt-oss-120b",
  defaultFamily: /^openai\/gpt-oss-120b/,
  imagesInToolResults: false,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  reasoning: (model, reasoning) => {
    const id = model.modelID.toLowerCase()
    if (id.includes("gpt-oss")) return { groq: { reasoningEffort: reasoningLevelOf(reasoning) } }
    if (id.includes("qwen3")) return { groq: { reasoningEffort: "default", reasoningFormat: "parsed" } }
    return { groq: { reasoningFormat: "parsed" } }
  },
  load: async (settings, modelID) => {
    const { createGroq } = await importSDK("@ai-sdk/groq", "Groq", () => import("@ai-sdk/groq"))
    return createGroq(sdkSettings(settings))(modelID)
  },
  hints: { key: "create a key at https://console.groq.com/keys" }
}
