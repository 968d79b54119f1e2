import { Schema } from "effect"
import type { DiscoveredModel, ProviderDescriptor, ProviderSettings } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
import { fetchJSON, openAICompatibleModel, rootOf } from "./local-server.js"

/** Where LM Studio's server listens by default. */
const DEFAULT_BASE_URL = "http://127.0.0.1:1234/v1"

/** `GET /v1/models`: OpenAI's list shape. */
const OpenAIModels = Schema.Struct({ data: Schema.Array(Schema.Struct({ id: Schema.String })) })
const decodeOpenAIModels = Schema.decodeUnknownSync(OpenAIModels)

/** `GET /api/v0/models`: LM Studio's own listing, with each model's kind and context window. */
const LMStudioModels = Schema.Struct({
  data: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      type: Schema.optionalKey(Schema.String),
      max_context_length: Schema.optionalKey(Schema.Finite)
    })
  )
})
const decodeLMStudioModels = Schema.decodeUnknownSync(LMStudioModels)

/**
 * The models LM Studio offers: `/v1/models`, with the context windows of `/api/v0/models` when that answers
 * (embedding models, which it marks, are left out). Either listing alone is enough.
 */
const discover = async (settings: ProviderSettings): Promise<ReadonlyArray<DiscoveredModel>> => {
  const base = rootOf(settings.baseURL ?? DEFAULT_BASE_URL)
  const [openai, native] = await Promise.allSettled([
    fetchJSON(settings, `${base}/v1/models`, "LM Studio").then(decodeOpenAIModels),
    fetchJSON(settings, `${base}/api/v0/models`, "LM Studio").then(decodeLMStudioModels)
  ])
  if (openai.status === "rejected" && native.status === "rejected") throw openai.reason
  const details = new Map(native.status === "fulfilled" ? native.value.data.map((model) => [model.id, model]) : [])
  const ids = openai.status === "fulfilled" ? openai.value.data.map((model) => model.id) : [...details.keys()]
  return ids
    .filter((id) => details.get(id)?.type !== "embeddings")
    .map((id) => {
      const context = details.get(id)?.max_context_length
      return context === undefined ? { id } : { id, context }
    })
}

/** LM Studio's local server, through its OpenAI-compatible `/v1` API. */
export const lmstudio: ProviderDescriptor = {
  type: "lmstudio",
  name: "LM Studio",
  aliases: ["lm-studio"],
  catalogID: "lmstudio",
  auth: "optional",
  keyEnv: ["LMSTUDIO_API_KEY"],
  detectEnv: [],
  baseURL: { default: DEFAULT_BASE_URL },
  imagesInToolResults: false,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  reasoning: (_model, reasoning) => ({ openaiCompatible: { reasoningEffort: reasoningLevelOf(reasoning) } }),
  load: (settings, modelID) =>
    openAICompatibleModel({ ...settings, baseURL: settings.baseURL ?? DEFAULT_BASE_URL }, modelID),
  discover,
  hints: {
    connect:
      "is LM Studio's server running? Start it in LM Studio (Developer → Start server) or with `lms server start`, " +
      "and load the model"
  }
}
