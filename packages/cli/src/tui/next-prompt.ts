import type { PromptPart } from "@lathe/plugin/schema"
import { notAvailableWhenAttached } from "../backend.js"
import { attachFiles } from "./attachments.js"
import type { Listings } from "./listings.js"
import type { ControllerBase } from "./session-view.js"

/**
 * What the next prompt carries besides its text: context the person does not see as their message (shell output,
 * `/init`'s brief), the parts a command added (synthetic text, files), and what the text mentions with `@` (files
 * inlined or attached, the plugins' resources). Taken once: the prompt after it starts empty again.
 */
export class NextPrompt {
  private context: Array<string> = []
  private parts: Array<PromptPart> = []

  constructor(
    private readonly base: ControllerBase,
    private readonly listings: Listings
  ) {}

  /** Adds text for the model that the transcript does not show as the person's. */
  addContext(text: string): void {
    this.context.push(text)
  }

  /** Adds parts (a command's synthetic text, files). */
  addParts(parts: ReadonlyArray<PromptPart>): void {
    this.parts.push(...parts)
  }

  /**
   * The prompt's parts: its text, the context and parts added, each @mentioned resource and file. A mentioned file is
   * attached only where the session's read rules let it be read (asked where a read would ask), as `-f` files are.
   */
  async take(
    text: string,
    session: { readonly id: string; readonly agent: string | undefined }
  ): Promise<Array<PromptPart>> {
    const { backend, view, project } = this.base
    const parts: Array<PromptPart> = [{ type: "text", text }]
    for (const context of this.context.splice(0)) parts.push({ type: "text", text: context, synthetic: true })
    parts.push(...this.parts.splice(0))
    parts.push(...(await this.listings.attach(text)))
    const files = await attachFiles(text, project.root, async (path) => {
      if (backend.mayRead === undefined) return undefined
      const read = await backend.mayRead(session.id, session.agent, [path])
      if (read.ok) return undefined
      const tag = (read.error as { readonly _tag?: string } | undefined)?._tag
      return tag === "PermissionDenied"
        ? "a read of it is denied by the permission rules."
        : tag === "PermissionRejected"
          ? "reading it needs permission and the ask was rejected."
          : read.message
    })
    for (const part of files.parts) {
      // Images and PDFs travel as data URLs, which a server's prompt route does not take.
      if (part.type === "file" && part.mime !== "text/plain" && !backend.supports("binary-attachments")) {
        view.note("warn", `@${part.filename ?? "file"}`, [notAvailableWhenAttached("Attaching an image or PDF")])
        continue
      }
      parts.push(part)
    }
    for (const problem of files.problems) view.note("warn", problem.title, [problem.message])
    return parts
  }
}
