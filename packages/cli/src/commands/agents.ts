import { Config, Plugins, resolveAgents } from "@lathe/core"
import type { AgentInfo } from "@lathe/plugin"
import { Effect } from "effect"
import { runOnApp } from "../app.js"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"

/** An agent's own model, or "inherits": it runs on the model of the turn that runs it. */
const modelOf = (agent: AgentInfo): string => agent.model ?? "inherits"

/** `lathe agents`, declared once for the command kit. */
export const agentsSpec = defineCommand({
  name: "agents",
  usage: ["[--json]"],
  description: `Lists the agents of this project: name, mode (primary, subagent or all), model ("inherits": the model of the
turn that runs it, -m or its caller's), where it was defined, and its description. Run one with
\`lathe run --agent <name>\`, or a subagent with \`lathe run "@<name> …"\`.`,
  options: { json: { type: "boolean", description: "Print them as JSON" } }
})

/** `lathe agents`: every agent this project can use, its mode, its model and where it was defined. */
export const agentsCommand: Command = async (args, io: CliIO) => {
  const parsed = parseCommand(agentsSpec, args, io)
  if (typeof parsed === "number") return parsed
  const program = Effect.gen(function* () {
    const plugins = yield* Plugins
    const config = yield* Config
    return [...resolveAgents(plugins.agents, config.info.agent).values()].filter((agent) => !agent.hidden)
  })
  const result = await runOnApp(io, program, { mcp: false })
  if (!result.ok) {
    io.stderr(`lathe agents: ${result.message}\n`)
    return 1
  }
  const agents = result.value
  if (parsed.values.json) {
    io.stdout(
      `${JSON.stringify(
        agents.map((a) => ({
          name: a.name,
          mode: a.mode,
          model: modelOf(a),
          source: a.source,
          description: a.description ?? ""
        })),
        null,
        2
      )}\n`
    )
    return 0
  }
  const width = Math.max(...agents.map((a) => a.name.length), 4)
  const models = Math.max(...agents.map((a) => modelOf(a).length))
  io.stdout(
    `${agents
      .map(
        (a) =>
          `${a.name.padEnd(width)}  ${a.mode.padEnd(8)}  ${modelOf(a).padEnd(models)}  ${a.source}` +
          (a.description ? `\n${" ".repeat(width + 2)}${a.description}` : "")
      )
      .join("\n")}\n`
  )
  return 0
}
