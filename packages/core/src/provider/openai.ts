import type { LanguageModelV4, LanguageModelV4CallOptions, SharedV4ProviderOptions } from "@ai-sdk/provider"
import type { ProviderDescriptor } from "./descriptor.js"
import { openAISessionKey, promptFamilyOf, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/**
 * What every Responses request asks for unless the call's own `openai` options say otherwise: reasoning summaries
 * (`auto`), which Lathe shows as reasoning, and nothing stored at OpenAI (`store: false`, so organisations with zero
 * data retention work and nothing is kept between steps). With `store: false` the SDK itself adds
 * `include: ["reasoning.encrypted_content"]` for reasoning models (and only for them: other models refuse it), and
 * sends each reasoning part back as a `reasoning` item carrying its encrypted content (its metadata's
 * `reasoningEncryptedContent`, which the session keeps on the part) instead of a reference to a stored item.
 */
const STATELESS = { store: false, reasoningSummary: "auto" } as const
/** The same with stored responses (`provider.openai.options.store: true`): summaries only. */
const STORED = { reasoningSummary: "auto" } as const

/** `model`, each call asking for `defaults` under the call's own `openai` options. */
const withDefaults = (model: LanguageModelV4, defaults: SharedV4ProviderOptions[string]): LanguageModelV4 => {
  const merged = (options: LanguageModelV4CallOptions): LanguageModelV4CallOptions => ({
    ...options,
    providerOptions: { ...options.providerOptions, openai: { ...defaults, ...options.providerOptions?.openai } }
  })
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls
    },
    doGenerate: (options) => model.doGenerate(merged(options)),
    doStream: (options) => model.doStream(merged(options))
  }
}

/**
 * OpenAI, through the Responses API, stateless by default (see `STATELESS`). `provider.openai.options.store: true`
 * in lathe.json turns stored responses back on (reasoning then goes back as references to stored items); an
 * untrusted project's config cannot set it (its `provider` options are dropped).
 */
export const openai: ProviderDescriptor = {
  type: "openai",
  name: "OpenAI",
  catalogID: "openai",
  auth: "key",
  keyEnv: ["OPENAI_API_KEY"],
  defaultModel: "gpt-5",
  defaultFamily: /^gpt-\d/,
  imagesInToolResults: true,
  prompt: (modelID) => promptFamilyOf(modelID, "openai"),
  cache: () => ({ kind: "session-key", options: openAISessionKey }),
  reasoning: (_model, reasoning) => ({ openai: { reasoningEffort: reasoningLevelOf(reasoning) } }),
  load: async (settings, modelID) => {
    const { createOpenAI } = await importSDK("@ai-sdk/openai", "OpenAI", () => import("@ai-sdk/openai"))
    // `store` is Lathe's switch, not a setting of the SDK's factory.
    const { store, ...options } = settings.options
    const model = createOpenAI(sdkSettings({ ...settings, options }))(modelID)
    return withDefaults(model, store === true ? STORED : STATELESS)
  },
  hints: { key: "create a key at https://platform.openai.com/api-keys" },
  // The Responses API's hosted web search (Lathe's OpenAI models speak Responses).
  nativeSearch: () => ({ id: "openai.web_search", args: {} })
}
