import type { ProviderDescriptor, ReasoningSetting, ReasoningTarget } from "./descriptor.js"
import { budgetOf, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/**
 * Gemini 1.x and 2.x models (and the old `gemini-pro`) take a thinking budget; Gemini 3 and later take a thinking
 * level. This is how `@ai-sdk/google` itself tells them apart: an unknown Gemini id is taken to be a newer one.
 */
const takesLevel = (modelID: string): boolean =>
  /(^|[/.])gemini-/i.test(modelID) && !/(^|[/.])gemini-(1|2)([.-]|$)|(^|[/.])gemini-pro(-vision)?$/i.test(modelID)

/** The largest thinking budget a Gemini 2.5 model accepts: 32,768 on 2.5 Pro, 24,576 on the others. */
const maxBudget = (modelID: string): number => (modelID.includes("2.5-pro") ? 32_768 : 24_576)

/**
 * Gemini's `thinkingConfig` for `reasoning` (the same on the Gemini API and Vertex): a level on Gemini 3 and later, a
 * budget on 2.x; with `includeThoughts`, so the thought summaries stream as reasoning.
 */
export const geminiThinking = (model: ReasoningTarget, reasoning: ReasoningSetting) => ({
  thinkingConfig: takesLevel(model.modelID)
    ? { thinkingLevel: reasoningLevelOf(reasoning), includeThoughts: true }
    : { thinkingBudget: Math.min(budgetOf(model, reasoning), maxBudget(model.modelID)), includeThoughts: true }
})

/**
 * Google's Gemini API (AI Studio keys). Gemini caches long prompts implicitly, so there are no breakpoints to set;
 * tool results carry images (Gemini 3 inside the function response, older models beside it).
 */
export const google: ProviderDescriptor = {
  type: "google",
  name: "Google Gemini",
  aliases: ["gemini"],
  catalogID: "google",
  auth: "key",
  // The SDK reads only GOOGLE_GENERATIVE_AI_API_KEY, so `load` passes the key found here explicitly.
  keyEnv: ["GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"],
  baseURL: { default: "https://generativelanguage.googleapis.com/v1beta" },
  defaultModel: "gemini-3.5-flash",
  defaultFamily: /^gemini-/,
  imagesInToolResults: true,
  prompt: "gemini",
  reasoning: (model, reasoning) => ({ google: geminiThinking(model, reasoning) }),
  load: async (settings, modelID) => {
    const { createGoogleGenerativeAI } = await importSDK(
      "@ai-sdk/google",
      "Google Gemini",
      () => import("@ai-sdk/google")
    )
    return createGoogleGenerativeAI(sdkSettings(settings))(modelID)
  },
  hints: { key: "create a key at https://aistudio.google.com/apikey" },
  // Grounding with Google Search: only Gemini 3 and later take it alongside function tools (the SDK drops the
  // function tools of an older model that gets both).
  nativeSearch: (modelID) =>
    /^gemini-([3-9]|\d{2,})/.test(modelID) ? { id: "google.google_search", args: {} } : undefined
}
