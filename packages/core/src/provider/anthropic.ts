import type { ProviderDescriptor } from "./descriptor.js"
import { ANTHROPIC_CACHE_MARK, anthropicThinking } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/** Anthropic's Messages API, direct. */
export const anthropic: ProviderDescriptor = {
  type: "anthropic",
  name: "Anthropic",
  catalogID: "anthropic",
  auth: "key",
  keyEnv: ["ANTHROPIC_API_KEY"],
  defaultModel: "claude-sonnet-4-5",
  defaultFamily: /^claude-sonnet-/,
  imagesInToolResults: true,
  prompt: "anthropic",
  cache: () => ({ kind: "breakpoints", mark: ANTHROPIC_CACHE_MARK }),
  reasoning: (model, reasoning) => ({ anthropic: anthropicThinking(model, reasoning) }),
  load: async (settings, modelID) => {
    const { createAnthropic } = await importSDK("@ai-sdk/anthropic", "Anthropic", () => import("@ai-sdk/anthropic"))
    return createAnthropic(sdkSettings(settings))(modelID)
  },
  hints: { key: "create a key at https://console.anthropic.com/settings/keys" },
  // Claude's server-side web search; a few searches per step keep one step's cost bounded.
  nativeSearch: () => ({ id: "anthropic.web_search_20250305", args: { maxUses: 5 } })
}
