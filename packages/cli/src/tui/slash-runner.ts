import { mkdir, writeFile } from "node:fs/promises"
import { dirname, join, resolve } from "node:path"
import { slashLine } from "@lathe/core"
import type { Session } from "@lathe/plugin/schema"
import { userConfigFile } from "../connect-config.js"
import { renderMarkdown } from "../session-markdown.js"
import { suggest } from "../suggest.js"
import { turnLines } from "../turn-lines.js"
import type { Listings } from "./listings.js"
import type { ModelChoice } from "./model-choice.js"
import { type ControllerBase, unavailable } from "./session-view.js"
import { costLines, helpLines, INIT_PROMPT, transcriptDocument } from "./slash-commands.js"
import type { Turns } from "./turns.js"

const WAIT_FOR_TURN = "Wait for the turn to end (or press Esc) first."

/** What `/undo` or `/redo` says it did: the files put back, and the changes made since that it overwrote. */
export const revertLines = (
  verb: "undo" | "redo",
  { files, overwritten }: { readonly files: ReadonlyArray<string>; readonly overwritten: ReadonlyArray<string> }
): Array<string> => [
  ...(files.length === 0
    ? [
        verb === "undo"
          ? "Nothing to put back: no file changed; the messages are hidden from the model."
          : "No files to bring back."
      ]
    : [
        `${verb === "undo" ? "Restored" : "Re-applied"} ${files.length} file${files.length === 1 ? "" : "s"}:`,
        ...files.map((f) => `  ${f}`)
      ]),
  ...(overwritten.length > 0 ? [`Overwrote changes made since to ${overwritten.join(", ")}.`] : [])
]

/**
 * What `/name args` does: the built-in commands (the session's: `/new`, `/sessions`, `/undo`, `/redo`, `/compact`,
 * `/export`, `/cost`; the choice's: `/agents`, `/models`, `/variant`; `/init`, `/help`) and the plugins' commands,
 * which expand to a prompt. Pickers (`/sessions`, `/agents`, `/models` without an argument) are the UI's to open; it
 * then calls `switchSession`, `setModel` or the choice's `setAgent`.
 */
export class SlashRunner {
  constructor(
    private readonly base: ControllerBase,
    private readonly parts: { readonly turns: Turns; readonly choice: ModelChoice; readonly listings: Listings }
  ) {}

  /** Runs `/name args`. */
  async run(text: string): Promise<void> {
    const { turns, choice, listings } = this.parts
    const { io, view } = this.base
    // Read as `lathe run "/name args"` reads a message (core's `slashLine`), so both run the same command.
    const { name: head, args } = slashLine(text) ?? { name: "", args: "" }
    switch (head) {
      case "undo":
      case "redo":
        return this.revert(head, args)
      case "new":
        return this.newSession()
      case "compact":
        return turns.compact()
      case "cost":
        return void view.note("info", "/cost", costLines(view.transcript))
      case "export":
        return this.export(args)
      case "init":
        return turns.submitPrompt("/init: write an AGENTS.md for this project", {}, INIT_PROMPT)
      case "agents":
      case "agent":
        if (args) choice.setAgent(args)
        return
      case "models":
      case "model":
        if (args) await this.setModel(args)
        return
      case "variant":
        return choice.setVariant(args)
      case "sessions":
        if (args) await this.switchSession(args)
        return
      case "help":
        view.note("info", "/help", helpLines(listings.commands()))
        return
      case "connect":
        if (unavailable(this.base, "connect", "/connect", "/connect")) return
        // The full-screen UI asks its questions itself; the plain line mode has no dialog.
        view.note("info", "/connect", [
          `/connect asks its questions in the full-screen UI (lathe at a terminal). Here, set the provider in ` +
            `${userConfigFile(io.env)} as the README's "Configure a model provider" shows.`
        ])
        return
      default:
        return this.pluginCommand(head, args)
    }
  }

  /**
   * `/<name> args`: a plugin's command (a command file, an MCP server's prompt, listed or not: the plugin says if it has
   * none) expands to the prompt that runs, with the command's agent and model.
   */
  private async pluginCommand(name: string, args: string): Promise<void> {
    const { turns, listings } = this.parts
    const { view } = this.base
    if (turns.busy)
      return void view.note("warn", "busy", ["Wait for the running turn to end (or press Esc to interrupt it)."])
    const expanded = await listings.expand(name, args)
    if ("error" in expanded) return void view.note("warn", `/${name}`, [expanded.error])
    const command = expanded.command
    if (!command) {
      // Attached to a server, an MCP prompt (`/<server>:<prompt>`) would run there, which its API does not offer.
      if (name.includes(":") && unavailable(this.base, "mcp", `/${name}`, "An MCP prompt")) return
      const near = suggest(
        name,
        listings.commands().map((c) => c.name)
      )
      const hint = near === undefined ? "" : ` Did you mean /${near}?`
      return void view.note("warn", `/${name}`, [`No command /${name}.${hint} Type / to see the commands, or /help.`])
    }
    turns.next.addParts(command.parts)
    await turns.submitPrompt(command.text, {
      ...(command.agent ? { agent: command.agent } : {}),
      ...(command.model ? { model: command.model } : {})
    })
  }

  /** `/undo [<n>] [--step] [--list] [--force]` and `/redo [--force]`, as `lathe undo` and `lathe redo`. */
  private async revert(verb: "undo" | "redo", args: string): Promise<void> {
    const { backend, view } = this.base
    const title = `/${verb}`
    const words = args.split(/\s+/).filter((w) => w !== "")
    const flags = new Set(words.filter((w) => w.startsWith("--")))
    const numbers = words.filter((w) => !w.startsWith("--"))
    const allowed = verb === "undo" ? ["--step", "--list", "--force"] : ["--force"]
    const turn = numbers[0] === undefined ? undefined : Number(numbers[0])
    if (
      [...flags].some((f) => !allowed.includes(f)) ||
      numbers.length > (verb === "undo" ? 1 : 0) ||
      (turn !== undefined && !(Number.isInteger(turn) && turn >= 1))
    )
      return void view.note("warn", title, [
        verb === "undo" ? "Usage: /undo [<n>] [--step] [--list] [--force]" : "Usage: /redo [--force]"
      ])
    const sessionID = view.sessionID
    if (!sessionID) return void view.note("warn", title, ["Nothing to do: this session has no turns yet."])
    if (flags.has("--list")) {
      const turns = await backend.turns(sessionID)
      return void view.note(
        turns.ok ? "info" : "warn",
        title,
        turns.ok ? turnLines(sessionID, turns.value, "/") : [turns.message]
      )
    }
    if (this.parts.turns.busy) return void view.note("warn", title, [WAIT_FOR_TURN])
    const result = await backend.revert(verb, sessionID, {
      ...(flags.has("--step") ? { step: true } : {}),
      ...(turn !== undefined ? { turn } : {}),
      ...(flags.has("--force") ? { force: true } : {})
    })
    if (!result.ok) return void view.note("warn", title, [result.message])
    view.note("info", title, revertLines(verb, result.value))
  }

  /**
   * `/export [file]`: the session as `lathe export` writes it (every call with its input, output and decisions), to
   * `file` (from the working directory) or to `<data>/exports/<session>.md`, never into the project unasked.
   */
  private async export(target: string): Promise<void> {
    const { backend, io, view, project } = this.base
    const session = view.transcript.session
    if (!session) return void view.note("warn", "/export", ["Nothing to export yet."])
    const file = target
      ? resolve(io.cwd, target)
      : project.dataDir !== undefined
        ? join(project.dataDir, "exports", `${session.id}.md`)
        : undefined
    if (file === undefined) return void view.note("warn", "/export", ["Name the file to write: /export <file>."])
    const stored = backend.document ? await backend.document(session.id) : undefined
    if (stored && !stored.ok) return void view.note("warn", "/export", [stored.message])
    const doc = stored?.value ?? transcriptDocument(session, view.transcript)
    try {
      await mkdir(dirname(file), { recursive: true })
      // A transcript holds file contents and command output: readable by its owner only (as `lathe export -o`).
      await writeFile(file, renderMarkdown(doc), { mode: 0o600 })
    } catch (error) {
      return void view.note("warn", "/export", [
        `Cannot write ${file}: ${error instanceof Error ? error.message : String(error)}`
      ])
    }
    view.note("info", "/export", [`Wrote ${file}`])
  }

  /** Starts a new, empty session (created with the first prompt). */
  newSession(): void {
    const { view } = this.base
    if (this.parts.turns.busy) {
      view.trace("/new refused: busy")
      return void view.note("warn", "/new", [WAIT_FOR_TURN])
    }
    view.clear()
    view.changed()
  }

  /** The project's sessions, newest first. */
  async sessions(): Promise<ReadonlyArray<Session>> {
    return this.base.backend.sessions()
  }

  /** Resumes a session by id (or the most recent one): loads its history and its subagents' sessions. */
  async switchSession(id: string): Promise<void> {
    if (this.parts.turns.busy) return void this.base.view.note("warn", "/sessions", [WAIT_FOR_TURN])
    await this.resume(id)
    this.base.view.changed()
  }

  /** Loads session `id` (undefined: the most recent one) into view, with its agent unless the person chose one. */
  async resume(id: string | undefined): Promise<void> {
    const { backend, view } = this.base
    const loaded = await backend.load(id)
    if (!loaded.ok) return void view.note("error", "resume", [loaded.message])
    if (!loaded.value) return void view.note("info", "resume", ["This project has no session yet; starting a new one."])
    view.show(loaded.value)
    this.parts.choice.takeSessionAgent(loaded.value.session.agent)
  }

  /** Switches the model (`/models <model>` or the picker), then sends the prompts that waited for one. */
  async setModel(model: string): Promise<void> {
    if (await this.parts.choice.setModel(model)) this.parts.turns.sendWaiting()
  }
}
