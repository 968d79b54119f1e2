import { ReasoningLevel } from "@lathe/core/providers"
import type { BackendAgent, BackendSetup } from "../backend.js"
import { type ControllerBase, unavailable } from "./session-view.js"

/**
 * Who answers the next prompt: the primary agent, the model (`/models`, an agent's own, or the config's) with its
 * label and context window for the footer, and the reasoning variant. The person's `--agent` and `--model` win over
 * what a session, an agent or a reload would choose.
 */
export class ModelChoice {
  agent: string
  model: string | undefined
  /** `/variant`: how hard a reasoning model thinks for the rest of this run; unset: the agent's or the model's. */
  variant: ReasoningLevel | undefined
  /** The resolved model's context window, for the footer. */
  contextLimit = 0
  /** The config's cost caps, for the budget left in the footer. */
  budget: BackendSetup["budget"]
  /** The resolved model's label; "no model" when none resolves, empty until the first resolution. */
  modelLabel = ""
  primaryAgents: ReadonlyArray<string> = []
  private agentInfos: ReadonlyArray<BackendAgent> = []

  constructor(private readonly base: ControllerBase) {
    this.agent = base.options.agent ?? "build"
    this.model = base.options.model
  }

  /** Whether a prompt typed now should wait for `/connect`: no model works, and `/connect` can set one up here. */
  get waitsForModel(): boolean {
    return this.modelLabel === "no model" && this.base.backend.supports("connect")
  }

  /** Takes the agents of the backend at start, or reloaded (`reload`: keeps the agent when it is still there). */
  takeAgents({ agents, defaultAgent, budget }: BackendSetup, reload = false): void {
    this.budget = budget
    this.agentInfos = agents
    this.primaryAgents = this.agentInfos.filter((a) => !a.hidden && a.mode !== "subagent").map((a) => a.name)
    if (!this.base.options.agent && !(reload && this.primaryAgents.includes(this.agent)))
      this.agent = defaultAgent ?? "build"
  }

  /** Takes a resumed session's agent, unless the person chose one. */
  takeSessionAgent(agent: string | undefined): void {
    if (agent && !this.base.options.agent && this.primaryAgents.includes(agent)) this.agent = agent
  }

  /** The subagent a prompt `@<name> <text>` names directly, if it names one that may be called so. */
  subagentFor(text: string): BackendAgent | undefined {
    const direct = /^@([a-z][a-z0-9_-]*)\s+([\s\S]+)$/.exec(text.trim())
    return direct ? this.agentInfos.find((a) => a.name === direct[1] && a.mode !== "primary" && !a.hidden) : undefined
  }

  /** Resolves the model for the footer; says why when none resolves (once), and how `/connect` helps. */
  async resolve(): Promise<void> {
    const { backend, view } = this.base
    const resolved = await backend.resolveModel(this.model, this.agent)
    if (!resolved.ok) {
      // The setup guide names /connect itself; a message about an untrusted project's settings does not.
      const connect =
        backend.supports("connect") && !resolved.message.includes("/connect")
          ? ["Or type /connect to set up a provider here (a prompt you type meanwhile waits for it)."]
          : []
      if (this.modelLabel === "") view.note("error", "no model", [...resolved.message.split("\n"), ...connect])
      this.modelLabel = "no model"
      return
    }
    this.modelLabel = resolved.value.label
    this.contextLimit = resolved.value.contextLimit
  }

  /** Switches the primary agent (and to its model, unless the person chose one). */
  setAgent(name: string): void {
    const { view } = this.base
    if (!this.primaryAgents.includes(name)) {
      view.note("warn", "/agents", [`No primary agent "${name}". Primary agents: ${this.primaryAgents.join(", ")}.`])
      return
    }
    this.agent = name
    const model = this.agentInfos.find((a) => a.name === name)?.model
    if (model && !this.base.options.model) this.model = model
    void this.resolve()
    view.changed()
  }

  /** Tab: the next primary agent. */
  cycleAgent(): void {
    const list = this.primaryAgents
    if (list.length === 0) return
    this.setAgent(list[(list.indexOf(this.agent) + 1) % list.length] ?? this.agent)
  }

  /** `/variant <low|medium|high|default>` sets how hard a reasoning model thinks; without an argument, says which. */
  setVariant(args: string): void {
    const { view } = this.base
    if (unavailable(this.base, "variant", "/variant", "Choosing a reasoning variant")) return
    const current = () => `Reasoning: ${this.variant ?? "default (the agent's or the model's setting)"}.`
    if (args === "") return void view.note("info", "/variant", [current()])
    if (args === "default" || args === "off") this.variant = undefined
    else {
      const level = ReasoningLevel.safeParse(args)
      if (!level.success)
        return void view.note("warn", "/variant", [`"${args}" is not a variant: use low, medium, high or default.`])
      this.variant = level.data
    }
    view.note("info", "/variant", [`${current()} Only models that reason use it.`])
    view.changed()
  }

  /** Models to pick from (none when attached: the server's API does not list them). */
  async models(): Promise<ReadonlyArray<string>> {
    if (unavailable(this.base, "models", "/models", "Listing models")) return []
    return this.base.backend.models()
  }

  /** Switches the model (checked against the configured providers first, when the agent runs here); whether it did. */
  async setModel(model: string): Promise<boolean> {
    const check = await this.base.backend.resolveModel(model, this.agent)
    if (!check.ok) {
      this.base.view.note("warn", "/models", check.message.split("\n"))
      return false
    }
    this.model = model
    await this.resolve()
    this.base.view.changed()
    return true
  }

  /**
   * After `/connect` wrote provider and model `ref`: drops a model chosen before (unless the person's), resolves
   * again, and says why when it still does not; whether a model works now.
   */
  async connected(ref: string, wrote: string): Promise<boolean> {
    const { backend, options, view } = this.base
    if (this.model !== undefined && this.model !== ref && !options.model) this.model = undefined
    const resolved = await backend.resolveModel(this.model, this.agent)
    view.note("info", "/connect", [wrote])
    if (!resolved.ok) {
      this.modelLabel = "no model"
      view.note("error", "no model", resolved.message.split("\n"))
      return false
    }
    this.modelLabel = resolved.value.label
    this.contextLimit = resolved.value.contextLimit
    view.changed()
    return true
  }
}
