import type { Plugin } from "../plugin.js"
import type { LatheEvent } from "../schema/events.js"
import type { MessageWithParts } from "../schema/message.js"

/** One step of a scripted model reply: text, reasoning, or a tool call. */
export type ScriptedPart =
  | { readonly text: string }
  | { readonly reasoning: string }
  | {
      /** The tool the model calls. */
      readonly tool: string
      /** Its arguments: an object, or a raw string (sent as is, so it may be invalid JSON). */
      readonly input: unknown
      /** Default `call_<call>_<index>`. */
      readonly id?: string
    }

/**
 * One model reply: text, reasoning and tool calls in order, then a finish reason and the usage. `finish` is OpenAI's
 * word (`stop`, `tool_calls`, `length`); it defaults to `tool_calls` when a step calls a tool, else `stop`. The usage
 * defaults to 10 input and 5 output tokens.
 */
export interface ScriptedReply {
  readonly steps: ReadonlyArray<ScriptedPart>
  readonly finish?: string
  readonly usage?: {
    readonly input: number
    readonly output: number
    readonly cached?: number
    readonly reasoning?: number
  }
}

/** One model call of a plugin turn. */
export type PluginTurnStep = ScriptedReply

/** A plugin under test, with the options config would give it (`"plugin": [["name", { … }]]`). */
export interface PluginWithOptions {
  readonly plugin: Plugin
  readonly options?: Readonly<Record<string, unknown>>
}

/** What `runPluginTurn` runs. */
export interface PluginTurnOptions {
  /** The plugins under test (a `definePlugin` result, or `{ plugin, options }` to pass config options). */
  readonly plugins: ReadonlyArray<Plugin | PluginWithOptions>
  /** The scripted model's replies, one per model call; a call past the end fails the turn (see `runPluginTurn`). */
  readonly steps: ReadonlyArray<PluginTurnStep>
  /** The person's prompt. Default "Go." (ignored when `command` is given). */
  readonly prompt?: string
  /** Send a plugin command's prompt instead, as `lathe run --command name args…` does. */
  readonly command?: { readonly name: string; readonly args?: ReadonlyArray<string> }
  /**
   * The project folder, with everything Lathe keeps (tool output, data) under it. Default: a fresh temp folder,
   * removed after the turn; pass your own to look at files the turn changed.
   */
  readonly root?: string
  /** The person's home folder (`ctx.home`: `~/.claude`, `~/.agents`…). Default: the project folder. */
  readonly home?: string
  /** Lathe's config folder (`ctx.configDir`: the person's own agents and skills). Default: `.lathe-config` in the project folder. */
  readonly configDir?: string
  /** `lathe.json` as an object, validated like the file (e.g. `{ permission: { bash: "deny" } }`). */
  readonly config?: Readonly<Record<string, unknown>>
  /** How permission asks are answered: "allow" (default) or "deny". */
  readonly permission?: "allow" | "deny"
}

/** One tool call of the turn, as it ended. */
export interface PluginTurnToolResult {
  readonly tool: string
  readonly callID: string
  readonly input: Readonly<Record<string, unknown>>
  readonly status: "completed" | "error"
  /** The text the model read (after `tool.after` hooks and truncation); absent when the call failed. */
  readonly output?: string
  /** Why the call failed, as the model read it; absent when it completed. */
  readonly error?: string
  readonly title?: string
  readonly metadata?: Readonly<Record<string, unknown>>
}

/** What the model was offered on one call. */
export interface PluginTurnRequest {
  /** The system prompt's parts, after `system.transform`. */
  readonly system: ReadonlyArray<string>
  /** The names of the tools offered. */
  readonly tools: ReadonlyArray<string>
}

/** A line a plugin wrote through `ctx.log` (or the host wrote about it: a hook that failed or timed out). */
export interface PluginTurnLog {
  readonly level: "info" | "warn" | "error"
  /** The plugin's name; absent for the host's own lines. */
  readonly plugin?: string
  readonly message: string
}

/** What a turn did, as plain data. */
export interface PluginTurn {
  /** Every event of the turn, from `session.created` to `session.idle` (e.g. `tool.completed`, `plugin.error`). */
  readonly events: ReadonlyArray<LatheEvent>
  /** Every tool call of the turn, in order, as it ended. */
  readonly toolResults: ReadonlyArray<PluginTurnToolResult>
  /** What the model was offered on each call, in order. */
  readonly requests: ReadonlyArray<PluginTurnRequest>
  /** The session's stored messages with their parts: the prompt, then the assistant's messages. */
  readonly messages: ReadonlyArray<MessageWithParts>
  /** What plugins and the host logged during the turn, setup included, in order. */
  readonly logs: ReadonlyArray<PluginTurnLog>
  /** The text of the turn's last assistant message. */
  readonly text: string
  readonly sessionID: string
}

/** What a Lathe host offers the kit's turn runner (`@lathe/core/testing` has it). */
export interface PluginTurnHost {
  readonly runPluginTurn: (options: PluginTurnOptions) => Promise<PluginTurn>
}
