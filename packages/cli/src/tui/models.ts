import { type AgentInfo, type ConfigInfo, catalogModelsOf } from "@lathe/core"

/**
 * The models a person can switch to: the configured and agent models, every model named in a configured provider's
 * `models`, and the catalogue's models of `anthropic` / `openai` when that provider is usable (configured, or
 * its API key is in the environment). As `provider/model`, without duplicates, configured ones first.
 */
export const availableModels = (
  info: ConfigInfo,
  env: Readonly<Record<string, string | undefined>>,
  agents: Iterable<AgentInfo>
): ReadonlyArray<string> => {
  const out = new Set<string>()
  if (info.model) out.add(info.model)
  for (const agent of agents) if (agent.model) out.add(agent.model)
  const providers = new Map<string, string>()
  for (const [id, config] of Object.entries(info.provider ?? {})) {
    providers.set(id, config.type ?? (id === "anthropic" || id === "openai" ? id : "openai-compatible"))
    for (const model of Object.keys(config.models ?? {})) out.add(`${id}/${model}`)
  }
  if (env.ANTHROPIC_API_KEY && !providers.has("anthropic")) providers.set("anthropic", "anthropic")
  if (env.OPENAI_API_KEY && !providers.has("openai")) providers.set("openai", "openai")
  for (const [id, type] of providers) {
    if (type === "openai-compatible") continue
    for (const model of catalogModelsOf(type)) out.add(`${id}/${model}`)
  }
  return [...out]
}
