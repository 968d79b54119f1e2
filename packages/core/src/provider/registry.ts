import { amazonBedrock } from "./amazon-bedrock.js"
import { anthropic } from "./anthropic.js"
import { azure } from "./azure.js"
import { cerebras } from "./cerebras.js"
import { deepseek } from "./deepseek.js"
import type { ProviderDescriptor } from "./descriptor.js"
import { fireworks } from "./fireworks.js"
import { google } from "./google.js"
import { googleVertex, googleVertexAnthropic } from "./google-vertex.js"
import { groq } from "./groq.js"
import { lmstudio } from "./lmstudio.js"
import { mistral } from "./mistral.js"
import { ollama } from "./ollama.js"
import { openai } from "./openai.js"
import { openaiCompatible } from "./openai-compatible.js"
import { openrouter } from "./openrouter.js"
import { togetherai } from "./togetherai.js"
import { xai } from "./xai.js"

/** Every provider Lathe ships, in the order `lathe models` and `/connect` list them. */
export const PROVIDERS: ReadonlyArray<ProviderDescriptor> = [
  anthropic,
  openai,
  google,
  googleVertex,
  googleVertexAnthropic,
  amazonBedrock,
  azure,
  openrouter,
  groq,
  deepseek,
  xai,
  mistral,
  togetherai,
  fireworks,
  cerebras,
  ollama,
  lmstudio,
  openaiCompatible
]

const byType = new Map<string, ProviderDescriptor>()
for (const descriptor of PROVIDERS) {
  byType.set(descriptor.type, descriptor)
  for (const alias of descriptor.aliases ?? []) if (!byType.has(alias)) byType.set(alias, descriptor)
}

/** The descriptor of a config `type`. */
export const descriptorOf = (type: string): ProviderDescriptor | undefined => byType.get(type)

/**
 * The descriptor a configured provider uses: its `type`, else the one its id names (`anthropic`, `google`, an alias
 * such as `gemini`), else OpenAI-compatible (a custom id with a `baseURL`).
 */
export const descriptorFor = (id: string, type?: string): ProviderDescriptor =>
  (type === undefined ? byType.get(id) : byType.get(type)) ?? openaiCompatible

/** Every config `type` value, for the schema and its error message. */
export const PROVIDER_TYPES: ReadonlyArray<string> = PROVIDERS.map((descriptor) => descriptor.type)
