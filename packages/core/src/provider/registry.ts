import { amazonBedrock } from "./amazon-bedrock.js"
import { anthropic } from "./anthropic.js"
import { azure } from "./azure.js"
import { catalogDescriptor, catalogProviderEntry, drivenBy } from "./catalog-provider.js"
import { cerebras } from "./cerebras.js"
import { chatgpt } from "./chatgpt.js"
import { deepseek } from "./deepseek.js"
import type { ProviderDescriptor } from "./descriptor.js"
import { fireworks } from "./fireworks.js"
import { githubCopilot } from "./github-copilot.js"
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
  githubCopilot,
  chatgpt,
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

/** Descriptors built from catalogue entries, by provider id, each on its first look-up (`undefined`: none). */
const fromCatalogue = new Map<string, ProviderDescriptor | undefined>()

/**
 * The descriptor of catalogue provider `id` that Lathe ships none for (see `catalog-provider.ts`); a catalogue id a
 * shipped descriptor reads its rows from (`fireworks-ai`) is that descriptor.
 */
const catalogueDescriptorOf = (id: string): ProviderDescriptor | undefined => {
  if (fromCatalogue.has(id)) return fromCatalogue.get(id)
  const entry = catalogProviderEntry(id)
  const shipped = entry === undefined ? undefined : PROVIDERS.find((descriptor) => descriptor.catalogID === id)
  const driver = entry === undefined ? undefined : drivenBy(entry.npm)
  const descriptor =
    entry === undefined
      ? undefined
      : (shipped ?? catalogDescriptor(entry, driver === undefined ? undefined : byType.get(driver)))
  fromCatalogue.set(id, descriptor)
  return descriptor
}

/**
 * The descriptor of a config `type` or of a provider id: a shipped provider's type or alias, else a provider of the
 * models.dev catalogue (`zhipuai`), built from its entry on first use.
 */
export const descriptorOf = (type: string): ProviderDescriptor | undefined =>
  byType.get(type) ?? catalogueDescriptorOf(type)

/** Whether `type` is a config `type` value (a shipped provider's type or alias, not a catalogue id). */
export const isProviderType = (type: string): boolean => byType.has(type)

/**
 * The descriptor a configured provider uses: its `type`, else the one its id names (`anthropic`, `google`, an alias
 * such as `gemini`, a catalogue provider such as `zhipuai`), else OpenAI-compatible (a custom id with a `baseURL`).
 */
export const descriptorFor = (id: string, type?: string): ProviderDescriptor =>
  (type === undefined ? descriptorOf(id) : byType.get(type)) ?? openaiCompatible

/** Every config `type` value, for the schema and its error message. */
export const PROVIDER_TYPES: ReadonlyArray<string> = PROVIDERS.map((descriptor) => descriptor.type)
