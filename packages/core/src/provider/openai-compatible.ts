import { Schema } from "effect"
import type { DiscoveredModel, ProviderDescriptor, ProviderSettings } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
import { fetchJSON } from "./local-server.js"

/** `GET <baseURL>/models`: OpenAI's list shape, which vLLM, llama.cpp, LM Studio, Ollama and gateways answer. */
const decodeModels = Schema.decodeUnknownSync(
  Schema.Struct({ data: Schema.Array(Schema.Struct({ id: Schema.String })) })
)

/** The models the server at `settings.baseURL` lists (`GET <baseURL>/models`, with the key as bearer token if any). */
const discover = async (settings: ProviderSettings): Promise<ReadonlyArray<DiscoveredModel>> => {
  const url = `${(settings.baseURL ?? "").replace(/\/+$/, "")}/models`
  const notAList = () => new Error(`The server answered ${url} with something other than a list of models.`)
  const body = await fetchJSON(settings, url, "The server").catch((error: unknown) => {
    throw error instanceof SyntaxError ? notAList() : error
  })
  try {
    return decodeModels(body).data.map((model) => ({ id: model.id }))
  } catch {
    throw notAList()
  }
}

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
  // Lathe's own Chat Completions client (no SDK package to install), loaded on first use.
  load: async (settings, modelID) => (await import("./chat-completions.js")).chatCompletionsModel(settings, modelID),
  discover,
  hints: { connect: "check that the server is running and that baseURL ends where its /chat/completions lives" }
}
