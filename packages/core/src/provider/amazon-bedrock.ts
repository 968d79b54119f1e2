import type { CacheStrategy, ProviderDescriptor, ProviderSettings } from "./descriptor.js"
import { budgetOf, promptFamilyOf, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/**
 * Claude models that take Bedrock cache points: Claude 3.5 Haiku, 3.7 Sonnet and every Claude 4 and later, with or
 * without a cross-region prefix (`us.`, `eu.`, `global.` …). Claude 2, Instant, 3 and 3.5 Sonnet do not.
 */
const CLAUDE = /(^|\.)anthropic\.claude-/
const CLAUDE_WITHOUT_CACHE = /anthropic\.claude-(v2|instant|3-(haiku|sonnet|opus)|3-5-sonnet)/
/** Amazon Nova text models (Micro, Lite, Pro, Premier, Nova 2), which take cache points in system and messages. */
const NOVA = /(^|\.)amazon\.nova-(micro|lite|pro|premier|2-)/
/** OpenAI's open-weight models on Bedrock, which take a reasoning effort. */
const GPT_OSS = /(^|\.)openai\.gpt-oss/

/** The mark the SDK turns into a Converse `cachePoint` block after a system message or a message's content. */
const BEDROCK_CACHE: CacheStrategy = { kind: "breakpoints", mark: { bedrock: { cachePoint: { type: "default" } } } }

const isClaude = (modelID: string) => CLAUDE.test(modelID)

const option = (settings: ProviderSettings, name: string): string | undefined => {
  const value = settings.options[name]
  return typeof value === "string" && value !== "" ? value : undefined
}

/** The first of `names` set (non-empty) in the environment. */
const envOf = (settings: ProviderSettings, ...names: ReadonlyArray<string>): string | undefined => {
  for (const name of names) {
    const value = settings.env[name]?.trim()
    if (value) return value
  }
  return undefined
}

/** The Bedrock API key: config `apiKey`, `AWS_BEARER_TOKEN_BEDROCK`, or `options.apiKey`. */
const bearerOf = (settings: ProviderSettings) =>
  settings.apiKey || option(settings, "apiKey") || envOf(settings, "AWS_BEARER_TOKEN_BEDROCK")

const regionOf = (settings: ProviderSettings) =>
  option(settings, "region") ?? envOf(settings, "AWS_REGION", "AWS_DEFAULT_REGION")

const endpointOf = (settings: ProviderSettings) =>
  settings.baseURL || envOf(settings, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_ENDPOINT_URL")

const hasKeys = (settings: ProviderSettings) =>
  settings.options.credentialProvider !== undefined ||
  (option(settings, "accessKeyId") !== undefined && option(settings, "secretAccessKey") !== undefined) ||
  (envOf(settings, "AWS_ACCESS_KEY_ID") !== undefined && envOf(settings, "AWS_SECRET_ACCESS_KEY") !== undefined)

const credentialsFix = (settings: ProviderSettings): string => {
  const profile = envOf(settings, "AWS_PROFILE")
  const keys =
    "set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with " +
    "AWS_SESSION_TOKEN for temporary credentials)"
  if (profile === undefined) return keys
  return (
    `AWS_PROFILE=${profile} is set, but Lathe does not read AWS profiles: export that profile's keys with ` +
    `eval "$(aws configure export-credentials --profile ${profile} --format env)", or ${keys}`
  )
}

/**
 * What is missing for a Bedrock request: credentials (a Bedrock API key, or an access key pair), and the region
 * (needed to sign, and to find the endpoint unless a base URL is given).
 */
const missing = (settings: ProviderSettings): string | undefined => {
  const bearer = bearerOf(settings)
  if (bearer === undefined && !hasKeys(settings)) return credentialsFix(settings)
  const regionNeeded = bearer === undefined || endpointOf(settings) === undefined
  if (regionNeeded && regionOf(settings) === undefined)
    return "set AWS_REGION (the region where your Bedrock models are enabled, e.g. us-east-1)"
  return undefined
}

/**
 * Amazon Bedrock through the Converse API. Credentials come from the environment Lathe was given, never from the
 * SDK's own look at `process.env`: a Bedrock API key (bearer) when there is one, else the access key pair, signed
 * with SigV4. AWS profiles, SSO and instance roles need `@aws-sdk/credential-providers`, which Lathe does not ship.
 */
export const amazonBedrock: ProviderDescriptor = {
  type: "amazon-bedrock",
  name: "Amazon Bedrock",
  aliases: ["bedrock"],
  catalogID: "amazon-bedrock",
  auth: "ambient",
  keyEnv: ["AWS_BEARER_TOKEN_BEDROCK"],
  detectEnv: ["AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID"],
  baseURL: { env: "AWS_ENDPOINT_URL_BEDROCK_RUNTIME" },
  missing,
  defaultModel: "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
  defaultFamily: /^global\.anthropic\.claude-sonnet-/,
  imagesInToolResults: true,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  cache: (modelID) =>
    (isClaude(modelID) && !CLAUDE_WITHOUT_CACHE.test(modelID)) || NOVA.test(modelID) ? BEDROCK_CACHE : undefined,
  reasoning: (model, reasoning) => {
    if (isClaude(model.modelID))
      return { bedrock: { reasoningConfig: { type: "enabled", budgetTokens: budgetOf(model, reasoning) } } }
    if (NOVA.test(model.modelID) || GPT_OSS.test(model.modelID))
      return { bedrock: { reasoningConfig: { type: "enabled", maxReasoningEffort: reasoningLevelOf(reasoning) } } }
    return {}
  },
  load: async (settings, modelID) => {
    const { createAmazonBedrock } = await importSDK(
      "@ai-sdk/amazon-bedrock",
      "Amazon Bedrock",
      () => import("@ai-sdk/amazon-bedrock")
    )
    const bearer = bearerOf(settings)
    const accessKeyId = envOf(settings, "AWS_ACCESS_KEY_ID")
    const secretAccessKey = envOf(settings, "AWS_SECRET_ACCESS_KEY")
    const sessionToken = envOf(settings, "AWS_SESSION_TOKEN")
    const ownKeys = option(settings, "accessKeyId") !== undefined || settings.options.credentialProvider !== undefined
    const region = regionOf(settings)
    const endpoint = endpointOf(settings)
    return createAmazonBedrock({
      ...(region === undefined ? {} : { region }),
      // An empty key stops the SDK from reading AWS_BEARER_TOKEN_BEDROCK itself; it then signs with SigV4.
      apiKey: bearer ?? "",
      ...(ownKeys || bearer !== undefined
        ? {}
        : {
            credentialProvider: async () => {
              if (accessKeyId === undefined || secretAccessKey === undefined) throw new Error(credentialsFix(settings))
              return { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) }
            }
          }),
      ...sdkSettings({ ...settings, apiKey: undefined, baseURL: endpoint })
    })(modelID)
  },
  hints: {
    key:
      "create a Bedrock API key in the AWS console (Amazon Bedrock → API keys) and set AWS_BEARER_TOKEN_BEDROCK, or " +
      "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, with AWS_REGION",
    connect: "check AWS_REGION, and that the model is enabled there (Bedrock console → Model access)"
  }
}
