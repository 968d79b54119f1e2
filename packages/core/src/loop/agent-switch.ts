import type { AgentInfo } from "@lathe/plugin"
import { Context, Effect, Layer, Schema } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import { Config } from "../config/config.js"
import type { LLM } from "../llm/llm.js"
import { resolveAgents } from "../plugin-host/agent.js"
import { Plugins } from "../plugin-host/plugins.js"
import type { SessionStore } from "../store/session-store.js"
import type { SessionWriter } from "../store/session-writer.js"

/** A tool asked to hand the session to an agent that cannot take a prompt; `message` is for the model. */
export class AgentSwitchRefused extends Schema.TaggedError<AgentSwitchRefused>()("AgentSwitchRefused", {
  agent: Schema.String,
  message: Schema.String
}) {}

/**
 * Where a tool's `ctx.switchAgent` (the `plan_exit` and `plan_enter` tools, once the person said yes) leaves the
 * agent a session is to run with, until the turn's loop takes it after the step (see `switchTurnAgent`). The switch
 * happens there, in the one loop every front's turns run through (TurnRunner → SessionPrompt), so the TUI,
 * `lathe run`, the server and the SDK see it alike: as the session's `agent` (`session.updated`) and the next
 * assistant message's.
 */
export class AgentSwitch extends Context.Service<
  AgentSwitch,
  {
    /** Records that the session is to run with `agent` from its next step; refused unless it is a primary agent. */
    readonly request: (sessionID: string, agent: string) => Effect.Effect<void, AgentSwitchRefused>
    /** The agent recorded for the session since the last call, if any (and forgets it). */
    readonly take: (sessionID: string) => Effect.Effect<string | undefined>
  }
>()("@lathe/core/AgentSwitch") {
  static readonly layer = Layer.effect(
    AgentSwitch,
    Effect.gen(function* () {
      const plugins = yield* Plugins
      const config = yield* Config
      const pending = new Map<string, string>()
      return AgentSwitch.of({
        request: (sessionID, agent) =>
          Effect.suspend(() => {
            const agents = resolveAgents(plugins.agents, config.info.agent)
            const found = agents.get(agent)
            if (found === undefined || found.hidden || found.mode === "subagent") {
              const names = [...agents.values()].filter((a) => !a.hidden && a.mode !== "subagent").map((a) => a.name)
              return Effect.fail(
                new AgentSwitchRefused({
                  agent,
                  message: `No primary agent "${agent}" can take the session. Primary agents: ${names.sort().join(", ")}.`
                })
              )
            }
            pending.set(sessionID, agent)
            return Effect.void
          }),
        take: (sessionID) =>
          Effect.sync(() => {
            const agent = pending.get(sessionID)
            pending.delete(sessionID)
            return agent
          })
      })
    })
  )
}

/** What `switchTurnAgent` works with: the services of the turn, and the turn itself. */
export interface SwitchServices {
  readonly store: SessionStore["Service"]
  readonly writer: SessionWriter["Service"]
  readonly llm: LLM["Service"]
  readonly config: Config["Service"]
}

/** The turn a switch happens in: its session, agents, what its prompt asked for, and what it runs with now. */
export interface SwitchingTurn {
  readonly sessionID: string
  readonly agents: Map<string, AgentInfo>
  readonly input: { readonly model?: string; readonly variant?: ModelInfo["reasoning"] }
  readonly agent: AgentInfo
  readonly model: ModelInfo
}

/**
 * Hands the turn to `name`: stores it as the session's agent (announced as `session.updated`), and returns the agent
 * and the model the turn goes on with. The model follows the rule a new prompt's does: the prompt's model (`--model`),
 * else the agent's own, else the configured one; the turn's model is kept when neither agent has one of its own.
 * Undefined when the agent is gone (the request was checked when made, so only a config reload could do that).
 */
export const switchTurnAgent = Effect.fnUntraced(function* (
  services: SwitchServices,
  turn: SwitchingTurn,
  name: string
) {
  const agent = turn.agents.get(name)
  if (agent === undefined || agent.name === turn.agent.name) return undefined
  const wanted = turn.input.model ?? agent.model
  const same = wanted === undefined && turn.agent.model === undefined
  const resolved = same ? turn.model : yield* services.llm.resolve(wanted)
  const reasoning = turn.input.variant ?? services.config.info.agent?.[agent.name]?.reasoning ?? resolved.reasoning
  const model: ModelInfo = same || reasoning === undefined ? resolved : { ...resolved, reasoning }
  const session = yield* services.store.getSession(turn.sessionID)
  yield* services.writer.updateSession({ ...session, agent: agent.name })
  return { agent, model }
})
