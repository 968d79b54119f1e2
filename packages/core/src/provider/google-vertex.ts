import { readFile } from "node:fs/promises"
import type { ProviderDescriptor, ProviderEnv, ProviderSettings } from "./descriptor.js"
import { ANTHROPIC_CACHE_MARK, anthropicThinking, promptFamilyOf } from "./families.js"
import { geminiThinking } from "./google.js"
import { importSDK } from "./sdk-import.js"

/** The Google Cloud project: config `options.project`, else `GOOGLE_VERTEX_PROJECT`, else `GOOGLE_CLOUD_PROJECT`. */
const projectOf = (settings: ProviderSettings): string | undefined => {
  const configured = settings.options.project
  if (typeof configured === "string" && configured !== "") return configured
  return settings.env.GOOGLE_VERTEX_PROJECT || settings.env.GOOGLE_CLOUD_PROJECT || undefined
}

/**
 * The region: `GOOGLE_VERTEX_LOCATION`, else `GOOGLE_CLOUD_LOCATION`, else `global` (the endpoint that serves the
 * newest Gemini and Claude models). Config `options.location` wins over all three (it is passed to the SDK as is).
 */
const locationOf = (env: ProviderEnv): string => env.GOOGLE_VERTEX_LOCATION || env.GOOGLE_CLOUD_LOCATION || "global"

/**
 * Whether `value` is a credentials file: a JSON object with a `type` (`service_account`, `authorized_user`,
 * `external_account`, …). A plain check, not a schema: the descriptor is evaluated on every run, whichever provider.
 */
const isCredentials = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  typeof (value as { readonly type?: unknown }).type === "string"

/**
 * The credentials `GOOGLE_APPLICATION_CREDENTIALS` names in the provider's `env`, when that is not the file of
 * `process.env`: google-auth-library finds the process's own file (else gcloud's, else the metadata server's) by
 * itself and quietly, but prints deprecation warnings for credentials handed to it, so they are read and handed over
 * only for an environment of its own (an embedder's, a test's). `undefined` otherwise.
 */
const credentialsOf = async (env: ProviderEnv): Promise<Record<string, unknown> | undefined> => {
  const file = env.GOOGLE_APPLICATION_CREDENTIALS
  if (!file || file === process.env.GOOGLE_APPLICATION_CREDENTIALS) return undefined
  const fix =
    "point it at a key file from the Google Cloud console, or unset it and run `gcloud auth application-default login`"
  let text: string
  try {
    text = await readFile(file, "utf8")
  } catch (error) {
    throw new Error(`GOOGLE_APPLICATION_CREDENTIALS is ${file}, which cannot be read (${String(error)}): ${fix}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {}
  if (!isCredentials(parsed))
    throw new Error(`GOOGLE_APPLICATION_CREDENTIALS is ${file}, which is not a Google credentials JSON file: ${fix}`)
  return parsed
}

/** What every Vertex SDK factory takes: Lathe's fetch, project, region, base URL, headers and credentials. */
const vertexSettings = async (settings: ProviderSettings): Promise<Record<string, unknown>> => {
  const project = projectOf(settings)
  const credentials = await credentialsOf(settings.env)
  return {
    fetch: settings.fetch,
    ...(project ? { project } : {}),
    location: locationOf(settings.env),
    ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
    ...(settings.headers ? { headers: { ...settings.headers } } : {}),
    ...(credentials ? { googleAuthOptions: { credentials } } : {})
  }
}

/** Builds a Claude model on Vertex (Anthropic's Messages API at `…/publishers/anthropic/models/<id>:streamRawPredict`). */
const loadClaude = async (settings: ProviderSettings, modelID: string) => {
  const { createVertexAnthropic } = await importSDK(
    "@ai-sdk/google-vertex",
    "Google Vertex AI (Anthropic models)",
    () => import("@ai-sdk/google-vertex/anthropic")
  )
  return createVertexAnthropic({ ...(await vertexSettings(settings)), ...settings.options })(modelID)
}

const isClaude = (modelID: string): boolean => modelID.toLowerCase().includes("claude")

const CREDENTIALS_HINT =
  "Vertex uses Google application default credentials: run `gcloud auth application-default login`, or set " +
  "GOOGLE_APPLICATION_CREDENTIALS to a service-account key file"

/** What a Vertex request lacks: a project, unless an express-mode key (Gemini only) or a base URL stands in. */
const missingProject = (expressMode: boolean) => (settings: ProviderSettings) => {
  if (projectOf(settings) || settings.baseURL || (expressMode && settings.apiKey)) return undefined
  return expressMode
    ? "set GOOGLE_VERTEX_PROJECT to your Google Cloud project id (or GOOGLE_VERTEX_API_KEY for Vertex express mode)"
    : "set GOOGLE_VERTEX_PROJECT to your Google Cloud project id"
}

/**
 * Gemini on Google Cloud's Vertex AI. Requests are authorised with application default credentials (or an
 * express-mode API key, `GOOGLE_VERTEX_API_KEY`), in the project and region from the environment. Claude ids
 * (`claude-sonnet-4-5@20250929`, listed under Vertex in the catalogue) go to Vertex's Anthropic endpoint, as with
 * `google-vertex-anthropic`; the catalogue's Model-as-a-Service ids (`…-maas`) are refused with a message.
 */
export const googleVertex: ProviderDescriptor = {
  type: "google-vertex",
  name: "Google Vertex AI",
  aliases: ["vertex"],
  catalogID: "google-vertex",
  auth: "ambient",
  keyEnv: ["GOOGLE_VERTEX_API_KEY"],
  missing: missingProject(true),
  detectEnv: ["GOOGLE_VERTEX_PROJECT", "GOOGLE_CLOUD_PROJECT", "GOOGLE_VERTEX_API_KEY"],
  defaultModel: "gemini-3.5-flash",
  defaultFamily: /^gemini-/,
  imagesInToolResults: true,
  prompt: (modelID) => promptFamilyOf(modelID, "gemini"),
  cache: (modelID) => (isClaude(modelID) ? { kind: "breakpoints", mark: ANTHROPIC_CACHE_MARK } : undefined),
  reasoning: (model, reasoning) =>
    isClaude(model.modelID)
      ? { anthropic: anthropicThinking(model, reasoning) }
      : { googleVertex: geminiThinking(model, reasoning) },
  load: async (settings, modelID) => {
    if (isClaude(modelID)) return loadClaude(settings, modelID)
    if (modelID.endsWith("-maas"))
      throw new Error(
        `${modelID} is a Vertex Model-as-a-Service model, which speaks OpenAI's Chat Completions rather than Gemini's ` +
          "API; Lathe does not reach those through google-vertex yet: pick a Gemini or Claude model"
      )
    const { createVertex } = await importSDK(
      "@ai-sdk/google-vertex",
      "Google Vertex AI",
      () => import("@ai-sdk/google-vertex")
    )
    const common = await vertexSettings(settings)
    return createVertex({ ...common, ...(settings.apiKey ? { apiKey: settings.apiKey } : {}), ...settings.options })(
      modelID
    )
  },
  hints: {
    key: `${CREDENTIALS_HINT}; or create an express-mode key at https://console.cloud.google.com/vertex-ai/studio/settings/api-keys`
  }
}

/** Anthropic's Claude models on Google Cloud's Vertex AI, with application default credentials. */
export const googleVertexAnthropic: ProviderDescriptor = {
  type: "google-vertex-anthropic",
  name: "Claude on Google Vertex AI",
  catalogID: "google-vertex-anthropic",
  auth: "ambient",
  keyEnv: [],
  missing: missingProject(false),
  detectEnv: ["GOOGLE_VERTEX_PROJECT", "GOOGLE_CLOUD_PROJECT"],
  defaultModel: "claude-sonnet-4-5@20250929",
  defaultFamily: /^claude-sonnet-/,
  imagesInToolResults: true,
  prompt: "anthropic",
  cache: () => ({ kind: "breakpoints", mark: ANTHROPIC_CACHE_MARK }),
  reasoning: (model, reasoning) => ({ anthropic: anthropicThinking(model, reasoning) }),
  load: loadClaude,
  hints: { key: CREDENTIALS_HINT }
}
