import type { PluginCatalog } from "@lathe/plugin"
import { catalogReady, modelInfo, newestCatalogModel } from "../catalog/model-catalog.js"
import type { ConfigInfo } from "../config/config.js"
import { configuredProviders, defaultCandidates, defaultModelOf } from "../llm/configured.js"

/**
 * `ctx.catalog`: the providers of this run (read when asked: `lathe auth login` may store a key meanwhile) and the
 * loaded model catalogue, in the kit's plain shapes.
 */
export const pluginCatalog = (
  info: Pick<ConfigInfo, "provider">,
  env: Readonly<Record<string, string | undefined>>
): PluginCatalog => ({
  ready: catalogReady,
  providers: () =>
    configuredProviders(info, env).map((provider) => ({
      id: provider.id,
      type: provider.descriptor.type,
      ready: provider.ready,
      models: Object.keys(provider.models),
      defaultModel: defaultModelOf(provider)
    })),
  newestModel: newestCatalogModel,
  model: (providerID, modelID) => modelInfo(providerID, modelID, info.provider?.[providerID]?.models?.[modelID]),
  // The LLM layer's choice when config names no model (its `defaultCandidates`, each offering `defaultModelOf`).
  defaultModel: () => {
    for (const provider of defaultCandidates(configuredProviders(info, env))) {
      const model = defaultModelOf(provider)
      if (model !== undefined) return `${provider.id}/${model}`
    }
    return undefined
  }
})
