import type { PromptPart } from "@lathe/plugin/schema"
import { Effect } from "effect"
import { resolveAgents } from "../plugin-host/agent.js"
import type { CommandExpansion, PluginRequestError, UnknownCommand } from "../plugin-host/contributions.js"
import type { Plugins } from "../plugin-host/plugins.js"

/**
 * What a person sends to a session, as any front takes it: words, a plugin command with its arguments, attachments,
 * `@<uri>` resource mentions. The turn-runner turns it into a prompt's parts in one place ({@link prepareTurn}).
 */
export interface TurnInput {
  readonly sessionID: string
  /** What the person typed; with `command`, the command's arguments as typed. */
  readonly text: string
  /**
   * A plugin command to expand (a markdown command file's, an MCP server's prompt, any plugin's), as `/name` and
   * `lathe run --command` name it: its text becomes the message.
   */
  readonly command?: string
  /** The command's arguments (default: `text` split like a shell). */
  readonly arguments?: ReadonlyArray<string>
  /** What goes with the text and is not the person's words: files, images, synthetic context. */
  readonly attachments?: ReadonlyArray<PromptPart>
  /** Read the plugin resources `@<uri>` mentions name (after command expansion), and attach them (default false). */
  readonly mentions?: boolean
  /**
   * Let a message starting with `@<subagent> ` address that subagent directly, for this prompt only (default false);
   * with no model of its own it runs on `agent`'s model (the caller it stands in for).
   */
  readonly subagentMention?: boolean
  /** The agent to answer (over a command's). */
  readonly agent?: string
  /** `provider/model` (over a command's). */
  readonly model?: string
}

/** A person's input made into a prompt: its parts (the text first), the agent and model, and what went wrong. */
export interface PreparedTurn {
  /** The message's text: the person's words, or the command's. */
  readonly text: string
  /** Every part of the prompt: the text first, then attachments, the command's other parts, resources. */
  readonly parts: ReadonlyArray<PromptPart>
  readonly agent?: string
  readonly model?: string
  /** Set when the message addressed a subagent (`@name …`): it may take the prompt. */
  readonly allowSubagents?: boolean
  /** The subagent addressed (`@name …`), for the prompt's `agent` part. */
  readonly mention?: string
  /** The model a directly addressed subagent with no model of its own runs on. */
  readonly inheritedModel?: string
  /** Mentioned resources that could not be read (left out), written for the person. */
  readonly problems: ReadonlyArray<string>
}

/** Splits command arguments like a shell: spaces separate, "double" or 'single' quotes group (and are removed). */
export const splitCommandWords = (text: string): Array<string> => {
  const words: Array<string> = []
  for (const match of text.matchAll(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g))
    words.push(match[0].replace(/"([^"]*)"|'([^']*)'/g, (_, a?: string, b?: string) => a ?? b ?? ""))
  return words
}

/** A line read as a slash command: `/name args`. */
export interface SlashLine {
  /** What follows the `/`, up to the first whitespace (may be empty, or a path such as `etc/hosts`). */
  readonly name: string
  /** The rest of the line, trimmed: the command's arguments as typed. */
  readonly args: string
}

/**
 * `/name args` as the interactive session reads what the person typed: a line starting with `/` (not `//`, which
 * sends the text as it is). Undefined for any other line. The interactive session and `lathe run` read it the same.
 */
export const slashLine = (text: string): SlashLine | undefined => {
  const line = text.trim()
  if (!line.startsWith("/") || line.startsWith("//")) return undefined
  const name = line.slice(1).split(/\s+/)[0] ?? ""
  return { name, args: line.slice(1 + name.length).trim() }
}

/**
 * The command a headless message names (`lathe run "/review src"`): a slash line whose name can be a command's. A
 * path (`/etc/hosts is wrong`) cannot, so such a message goes to the model as typed.
 */
export const messageCommand = (text: string): SlashLine | undefined => {
  const line = slashLine(text)
  return line !== undefined && line.name !== "" && !line.name.includes("/") ? line : undefined
}

/** A command expanded for sending: the text the person's message becomes, the other parts, the agent and model. */
export interface ExpandedCommand {
  /** The prompt's text (the command's text parts, joined by blank lines). */
  readonly text: string
  /** What goes with the text and is not the person's words: synthetic text and files. */
  readonly parts: ReadonlyArray<PromptPart>
  readonly agent?: string
  readonly model?: string
}

/** A command's parts as a message: its plain text parts become the text; synthetic text and files go along. */
export const expandedCommand = (expansion: CommandExpansion): ExpandedCommand => {
  const own = expansion.parts.filter((part) => part.type === "text" && part.synthetic !== true)
  return {
    text: own.map((part) => (part.type === "text" ? part.text : "")).join("\n\n"),
    parts: expansion.parts.filter((part) => !own.includes(part)),
    ...(expansion.agent !== undefined ? { agent: expansion.agent } : {}),
    ...(expansion.model !== undefined ? { model: expansion.model } : {})
  }
}

// `@<uri>` at the start, or after whitespace, `(` or a quote; it ends at whitespace or a quote.
const MENTION = /(?:^|[\s("'])@([^\s"']+)/g

/**
 * The `@<uri>` mentions of `text` that could name a resource (they have a scheme: `<scheme>:<rest>`), each once, in
 * order, without trailing sentence punctuation (`.,;:!?)`).
 */
export const resourceMentions = (text: string): ReadonlyArray<string> => {
  const seen = new Set<string>()
  for (const match of text.matchAll(MENTION)) {
    const uri = (match[1] ?? "").replace(/[.,;:!?)]+$/, "")
    if (/^[^:]+:./.test(uri)) seen.add(uri)
  }
  return [...seen]
}

/**
 * The parts of the resources `text` mentions (`@<uri>`), read from the plugins that offer them. A mention no plugin
 * offers is left alone (a file, `@user:pass`); one that cannot be read is named in `problems` and left out.
 */
export const mentionedResources = Effect.fnUntraced(function* (plugins: Plugins["Service"], text: string) {
  const parts: Array<PromptPart> = []
  const problems: Array<string> = []
  if (!plugins.hasResources) return { parts, problems }
  for (const uri of resourceMentions(text)) {
    const read = yield* Effect.result(plugins.readResource(uri))
    if (read._tag === "Success") parts.push(...read.success)
    else if (read.failure._tag === "PluginRequestError") problems.push(read.failure.message)
  }
  return { parts, problems }
})

// "@explore find the parser": a subagent addressed by name, then the message.
const SUBAGENT_MENTION = /^@([a-z][a-z0-9_-]*)\s+([\s\S]+)$/

/**
 * Makes a person's input a prompt: expands the command (failing with `UnknownCommand`, or `PluginRequestError`
 * saying why the plugin refused: a missing argument), attaches mentioned resources, and lets a leading `@subagent`
 * take the prompt. `agents` are the agents by name (for `subagentMention`).
 */
export const prepareTurn = Effect.fnUntraced(function* (
  plugins: Plugins["Service"],
  agentConfig: Parameters<typeof resolveAgents>[1],
  input: TurnInput
): Effect.fn.Return<PreparedTurn, UnknownCommand | PluginRequestError> {
  const expanded: ExpandedCommand =
    input.command === undefined
      ? { text: input.text, parts: [] }
      : expandedCommand(
          yield* plugins.runCommand(input.command, input.arguments ?? splitCommandWords(input.text), input.text)
        )
  const resources = input.mentions === true ? yield* mentionedResources(plugins, expanded.text) : undefined
  const agent = input.agent ?? expanded.agent
  const model = input.model ?? expanded.model
  const direct = input.subagentMention === true ? SUBAGENT_MENTION.exec(expanded.text) : null
  const agents = direct ? resolveAgents(plugins.agents, agentConfig) : undefined
  const named = direct ? agents?.get(direct[1] ?? "") : undefined
  const subagent = named && !named.hidden && named.mode !== "primary" ? named : undefined
  const callerModel = subagent && input.agent ? agents?.get(input.agent)?.model : undefined
  const text = subagent && direct ? (direct[2] ?? expanded.text) : expanded.text
  return {
    text: expanded.text,
    parts: [
      { type: "text" as const, text },
      ...(input.attachments ?? []),
      ...expanded.parts,
      ...(resources?.parts ?? [])
    ],
    ...(subagent
      ? { agent: subagent.name, allowSubagents: true, mention: subagent.name }
      : agent !== undefined
        ? { agent }
        : {}),
    ...(model !== undefined ? { model } : {}),
    ...(callerModel !== undefined ? { inheritedModel: callerModel } : {}),
    problems: resources?.problems ?? []
  }
})
