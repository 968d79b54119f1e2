/**
 * The one place the ruleset of a run is assembled. The loop evaluates exactly what `runRuleset` returns, and
 * `lathe permissions explain` calls the same function, so an explanation and the decision it explains cannot drift.
 */

import type { AgentInfo, Rule, Ruleset } from "@lathe/plugin"
import { Effect } from "effect"
import { Config } from "../config/config.js"
import { Paths } from "../config/paths.js"
import { PermissionDefaults } from "../contracts/permission-next.js"
import { resolveAgents } from "../plugin-host/agent.js"
import { Plugins } from "../plugin-host/plugins.js"
import { truncationDir } from "../plugin-host/truncate.js"

/** The `source` of the rule that lets every agent read the tool output Lathe saved. */
export const TRUNCATION_SOURCE = "defaults (tool output Lathe saved; every agent may read it)"

/** What a run's ruleset is made of, in the order it is evaluated (the last matching rule wins). */
export interface RulesetParts {
  /** Built-in defaults and every plugin's contributed defaults (`PermissionDefaults`). */
  readonly defaults: Ruleset
  /** The agent's own rules (its definition, then the person's `agent.<name>` config). */
  readonly agent: Ruleset
  /** The global and project config's rules, with the project's trust applied (`Config.info.permission`). */
  readonly config: Ruleset
  /** Lathe's tool-output folder (`truncationDir`): every agent may read what the truncation note points to. */
  readonly truncationDir?: string | undefined
  /** Rules the caller adds last (the task tool denies recursion to subagents this way). */
  readonly extraRules?: Ruleset | undefined
}

/**
 * The ruleset a run evaluates: defaults, the agent's rules, the truncation folder kept readable (an agent that asks
 * or denies `external_directory` would otherwise hide the output the truncation note tells the model to read), the
 * person's config, then `extraRules`. Remembered approvals are not rules of it: the engine consults them after.
 */
export const assembleRuleset = (parts: RulesetParts): Ruleset => {
  const truncation: Array<Rule> = parts.truncationDir
    ? [
        {
          permission: "external_directory",
          pattern: `${parts.truncationDir}/*`,
          action: "allow",
          source: TRUNCATION_SOURCE
        }
      ]
    : []
  return [...parts.defaults, ...parts.agent, ...truncation, ...parts.config, ...(parts.extraRules ?? [])]
}

/** The agent a prompt runs with when none is named: the config's `default_agent`, else `build`. */
export const defaultAgentName = (config: Config["Service"]): string => config.info.default_agent ?? "build"

/** The agent a ruleset was assembled for, and the ruleset. `agent` is undefined when no agent has that name. */
export interface AgentRuleset {
  readonly agentName: string
  readonly agent: AgentInfo | undefined
  readonly ruleset: Ruleset
}

/**
 * The ruleset a run of `agentName` (default: the default agent) evaluates in this project, from the same services
 * the loop reads: `PermissionDefaults`, the plugins' agents with the config's overrides, the config and the paths.
 */
export const runRuleset = Effect.fn("PermissionRuleset.runRuleset")(function* (agentName?: string) {
  const config = yield* Config
  const plugins = yield* Plugins
  const paths = yield* Paths
  const defaults = yield* PermissionDefaults
  const name = agentName ?? defaultAgentName(config)
  const agent = resolveAgents(plugins.agents, config.info.agent).get(name)
  const ruleset = assembleRuleset({
    defaults,
    agent: agent?.permission ?? [],
    config: config.info.permission,
    truncationDir: truncationDir(paths.data)
  })
  return { agentName: name, agent, ruleset } satisfies AgentRuleset
})
