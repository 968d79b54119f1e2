import type { ProviderDescriptor, ProviderSettings } from "./descriptor.js"
import { openAISessionKey, promptFamilyOf, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

const stringOption = (settings: ProviderSettings, name: string): string | undefined => {
  const value = settings.options[name]
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined
}

/** The resource name: config `options.resourceName`, else `AZURE_RESOURCE_NAME`. */
const resourceOf = (settings: ProviderSettings): string | undefined =>
  stringOption(settings, "resourceName") ?? (settings.env.AZURE_RESOURCE_NAME?.trim() || undefined)

/** Whether config asks for the older per-deployment URLs (`/openai/deployments/{deployment}/…?api-version=…`). */
const deploymentURLs = (settings: ProviderSettings): boolean => settings.options.useDeploymentBasedUrls === true

/**
 * Azure OpenAI. The model id is the deployment name. Requests go to the v1 Responses API,
 * `https://{resource}.openai.azure.com/openai/v1/responses?api-version=v1` (or `{baseURL}/v1/responses` for a base
 * URL on an Azure host, `{baseURL}/responses` for any other host). With `options.useDeploymentBasedUrls` they go to
 * Chat Completions on the deployment instead, `{…}/openai/deployments/{deployment}/chat/completions?api-version=…`,
 * which needs a dated `options.apiVersion`.
 *
 * Options Lathe adds are keyed `openai`: the Responses model reads them when no `azure` options are given, and the
 * Chat Completions model reads only those. Reasoning also sets `forceReasoning`, since a deployment's name need not
 * say which model it runs.
 */
export const azure: ProviderDescriptor = {
  type: "azure",
  name: "Azure OpenAI",
  catalogID: "azure",
  auth: "key",
  keyEnv: ["AZURE_API_KEY"],
  missing: (settings) => {
    if (settings.baseURL === undefined && resourceOf(settings) === undefined)
      return (
        "set AZURE_RESOURCE_NAME to your Azure OpenAI resource's name (the <name> in https://<name>.openai.azure.com), " +
        "or provider.azure.baseURL in lathe.json"
      )
    if (deploymentURLs(settings) && stringOption(settings, "apiVersion") === undefined)
      return 'set provider.azure.options.apiVersion in lathe.json (a dated version such as "2024-10-21") for deployment URLs'
    return undefined
  },
  defaultModel: "gpt-5.4",
  defaultFamily: /^gpt-\d/,
  // Chat Completions (deployment URLs) would send a tool result's image as JSON text; moved to a user message, it
  // reaches the model as an image on both APIs.
  imagesInToolResults: false,
  prompt: (modelID) => promptFamilyOf(modelID, "openai"),
  cache: () => ({ kind: "session-key", options: openAISessionKey }),
  reasoning: (_model, reasoning) => ({
    openai: { reasoningEffort: reasoningLevelOf(reasoning), forceReasoning: true }
  }),
  load: async (settings, modelID) => {
    const { createAzure } = await importSDK("@ai-sdk/azure", "Azure OpenAI", () => import("@ai-sdk/azure"))
    const resourceName = resourceOf(settings)
    const provider = createAzure({
      ...(resourceName === undefined ? {} : { resourceName }),
      ...sdkSettings(settings)
    } as Parameters<typeof createAzure>[0])
    return deploymentURLs(settings) ? provider.chat(modelID) : provider(modelID)
  },
  hints: {
    key: "copy a key from Keys and Endpoint of your Azure OpenAI resource in the Azure portal",
    connect: "check AZURE_RESOURCE_NAME (or baseURL) and that a deployment with this model's name exists"
  }
}
