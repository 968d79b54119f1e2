import { Schema } from "effect"
import type { DiscoveredModel, ProviderDescriptor, ProviderSettings } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
import { fetchJSON, openAICompatibleModel, rootOf } from "./local-server.js"

/** Where Ollama listens when nothing says otherwise. */
const DEFAULT_ROOT = "http://127.0.0.1:11434"

/**
 * Ollama's root URL (no `/v1`) from a base URL or from `OLLAMA_HOST`, read the way Ollama reads it: `host`,
 * `host:port` or a URL; no scheme means `http` and port 11434; an empty or wildcard host (`0.0.0.0`, what a server
 * binds to) means this machine. A trailing `/v1` is dropped.
 */
export const ollamaRoot = (raw: string | undefined): string => {
  const text = raw?.trim()
  if (!text) return DEFAULT_ROOT
  const schemed = /^[a-z][a-z0-9+.-]*:\/\//i.test(text)
  let url: URL
  try {
    url = new URL(schemed ? text : `http://${text}`)
  } catch {
    return DEFAULT_ROOT
  }
  if (!schemed && url.port === "") url.port = "11434"
  if (url.hostname === "" || url.hostname === "0.0.0.0" || url.hostname === "[::]") url.hostname = "127.0.0.1"
  return rootOf(url.toString())
}

const Tags = Schema.Struct({
  models: Schema.Array(
    Schema.Struct({
      name: Schema.String,
      details: Schema.optionalKey(
        Schema.Struct({
          parameter_size: Schema.optionalKey(Schema.String),
          quantization_level: Schema.optionalKey(Schema.String)
        })
      )
    })
  )
})
const decodeTags = Schema.decodeUnknownSync(Tags)

/** The models pulled into an Ollama server (`GET /api/tags`); no context (that is one `/api/show` per model). */
const discover = async (settings: ProviderSettings): Promise<ReadonlyArray<DiscoveredModel>> => {
  const tags = decodeTags(await fetchJSON(settings, `${ollamaRoot(settings.baseURL)}/api/tags`, "Ollama"))
  return tags.models.map((model): DiscoveredModel => {
    const about = [model.details?.parameter_size, model.details?.quantization_level].filter(Boolean).join(", ")
    return { id: model.name, ...(about ? { name: `${model.name} (${about})` } : {}) }
  })
}

/** Ollama on this machine (or where `OLLAMA_HOST` points), through its OpenAI-compatible `/v1` API. */
export const ollama: ProviderDescriptor = {
  type: "ollama",
  name: "Ollama",
  // models.dev lists only Ollama Cloud; local models borrow limits from any provider serving the id, at no price.
  catalogID: "ollama",
  auth: "optional",
  keyEnv: [],
  detectEnv: [],
  baseURL: { default: `${DEFAULT_ROOT}/v1`, env: "OLLAMA_HOST" },
  imagesInToolResults: false,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  reasoning: (_model, reasoning) => ({ openaiCompatible: { reasoningEffort: reasoningLevelOf(reasoning) } }),
  load: (settings, modelID) =>
    openAICompatibleModel({ ...settings, baseURL: `${ollamaRoot(settings.baseURL)}/v1` }, modelID),
  discover,
  hints: {
    connect:
      "is `ollama serve` running? Start it (or the Ollama app), pull the model with `ollama pull <model>`, and set " +
      "OLLAMA_HOST if it listens elsewhere than 127.0.0.1:11434"
  }
}
