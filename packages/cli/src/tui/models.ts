import { type ConfigInfo, catalogModelsOf } from "@lathe/core"
import { storedKeys } from "@lathe/core/providers"
import type { AgentInfo } from "@lathe/plugin"
import { catalogueIDOf, discoverModels, yourProviders } from "../provider-status.js"

type Env = Readonly<Record<string, string | undefined>>

/** How long `/models` waits for local servers to list their models before it opens without them. */
export const DISCOVER_BUDGET_MS = 1_000

/**
 * The models a person can switch to: the configured and agent models, every model named in a configured provider's
 * `models`, and the catalogue's models of every provider they have (configured, or with a key in the environment or
 * stored by `lathe auth`). As `provider/model`, without duplicates, configured ones first.
 */
export const availableModels = (
  info: ConfigInfo,
  env: Env,
  agents: Iterable<AgentInfo>,
  stored: Readonly<Record<string, string>> = storedKeys(env)
): ReadonlyArray<string> => {
  const out = new Set<string>()
  if (info.model) out.add(info.model)
  for (const agent of agents) if (agent.model) out.add(agent.model)
  const yours = yourProviders(info, env, stored)
  for (const status of yours)
    for (const model of Object.keys(info.provider?.[status.id]?.models ?? {})) out.add(`${status.id}/${model}`)
  for (const status of yours) {
    if (status.descriptor.type === "openai-compatible") continue
    for (const model of catalogModelsOf(catalogueIDOf(status.id, info))) out.add(`${status.id}/${model}`)
  }
  return [...out]
}

/**
 * `availableModels` plus the models the configured local servers (`ollama`, `lmstudio`: providers whose descriptor can
 * `discover`) offer right now. Servers are asked together and waited for at most `budgetMs`: a slow or stopped one
 * adds nothing, so the picker opens on time.
 */
export const availableModelsWithLocal = async (
  info: ConfigInfo,
  env: Env,
  agents: Iterable<AgentInfo>,
  budgetMs: number = DISCOVER_BUDGET_MS
): Promise<ReadonlyArray<string>> => {
  const stored = storedKeys(env)
  const out = new Set(availableModels(info, env, agents, stored))
  // An OpenAI-compatible provider may be a remote gateway: it is asked only when named (`/connect`, `lathe models`).
  const local = yourProviders(info, env, stored).filter(
    (status) =>
      status.configured && status.descriptor.discover !== undefined && status.descriptor.type !== "openai-compatible"
  )
  const found = await Promise.all(
    local.map(async (status) => {
      const result = await discoverModels(status.settings, status.descriptor, budgetMs)
      return "models" in result ? result.models.map((model) => `${status.id}/${model.id}`) : []
    })
  )
  for (const ref of found.flat()) out.add(ref)
  return [...out]
}
