import type { Listings } from "./listings.js"
import type { ModelChoice } from "./model-choice.js"
import type { ControllerBase } from "./session-view.js"
import type { Turns } from "./turns.js"

/**
 * The answers the person gives to what is asked of them: a tool's permission ask and the agent's questions (both
 * shown from the transcript, `permissions[0]` and `questions[0]`), and the trust prompt of a folder whose config was
 * narrowed.
 */
export class Asks {
  /** Set on start in an untrusted folder whose config was narrowed: what it would grant if trusted. */
  trustPrompt: ReadonlyArray<string> | undefined

  constructor(
    private readonly base: ControllerBase,
    private readonly parts: { readonly turns: Turns; readonly choice: ModelChoice; readonly listings: Listings }
  ) {}

  /** Answers the permission ask `id`. */
  async replyPermission(id: string, reply: "once" | "always" | "reject", message?: string): Promise<void> {
    const { backend, view } = this.base
    const result = await backend.replyPermission(id, reply, message)
    if (!result.ok && backend.attached) view.note("warn", "permission", [result.message])
  }

  /** Answers the question `id` (one list of answers per question), or dismisses it. */
  async replyQuestion(id: string, answers: ReadonlyArray<ReadonlyArray<string>> | undefined): Promise<void> {
    const { backend, view } = this.base
    const result = await backend.replyQuestion(id, answers)
    if (!result.ok && backend.attached) view.note("warn", "question", [result.message])
  }

  /**
   * Answers the trust prompt. `true` trusts the project and reloads the agent's services, so its config (plugins,
   * MCP servers, providers, rules) applies from the next prompt, in this session; `false` remembers the "no" for this
   * folder (`lathe trust` still trusts it later).
   */
  async answerTrust(trust: boolean): Promise<void> {
    const { backend, view, project } = this.base
    const { turns, choice, listings } = this.parts
    this.trustPrompt = undefined
    view.changed()
    if (!trust) {
      const declined = await backend.decline()
      view.note("info", "trust", [
        `Not trusted: the project's config stays narrowed${declined.ok ? ", and Lathe will not ask again here" : ""}. ` +
          `\`lathe trust\` in ${project.root} trusts it later.`
      ])
      return
    }
    // The services are rebuilt between turns, never under a running one.
    if (turns.busy) view.note("info", "trust", ["Trusting this folder once the running turn ends."])
    await turns.idle()
    const result = await backend.trust()
    if (!result.ok) return void view.note("error", "trust", [result.message])
    const setup = await backend.setup()
    if (!setup.ok) return void view.note("error", "trust", setup.message.split("\n"))
    choice.takeAgents(setup.value, true)
    view.sayNotices(setup.value.notices)
    void listings.reload()
    await choice.resolve()
    view.note("info", "trust", [`Trusted ${project.root}: its config applies in full from now on, in this session.`])
  }
}
