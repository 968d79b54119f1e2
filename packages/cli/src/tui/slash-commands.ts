import type { ListedCommand } from "@lathe/core"
import type { Session } from "@lathe/plugin/schema"
import type { SessionDocument } from "../session-document.js"
import type { Transcript } from "./transcript.js"

/** A slash command the palette lists: a built-in, or a plugin's (a command file, an MCP server's prompt, …). */
export interface SlashCommand {
  readonly name: string
  readonly description: string
  /** The plugin command it is, when it is not a built-in. */
  readonly plugin?: ListedCommand
}

export const BUILTIN_COMMANDS: ReadonlyArray<SlashCommand> = [
  {
    name: "undo",
    description: "Take back the last turn (<n>, --step, --list, --force)"
  },
  { name: "redo", description: "Bring back what /undo took away (--force over later changes)" },
  { name: "new", description: "Start a new session" },
  { name: "sessions", description: "Pick an earlier session of this project and resume it" },
  { name: "agents", description: "Switch the primary agent (Tab cycles them)" },
  { name: "models", description: "Switch the model for this session" },
  { name: "variant", description: "Reasoning effort this session: low, medium, high or default" },
  { name: "connect", description: "Set up a model provider (key or server URL) in your config" },
  { name: "compact", description: "Summarise the history now to free the model's context" },
  { name: "cost", description: "Tokens and cost of this session, per step" },
  { name: "export", description: "Write this session as Markdown (or to /export <file>)" },
  { name: "init", description: "Have the agent write an AGENTS.md for this project" },
  { name: "help", description: "Keys and commands" },
  { name: "exit", description: "Quit Lathe" }
]

/** What /init asks the agent to do. */
export const INIT_PROMPT = `Write an AGENTS.md file at the root of this project for coding agents that will work here. Explore first
(README, package manifests, build and test scripts, the source layout, existing agent rules such as CLAUDE.md or
.cursorrules), then write a concise file (about 20–40 lines): how to build, test and lint (the exact commands, and how to
run one test), the layout of the code, the conventions a newcomer would get wrong. If AGENTS.md exists, improve it.`

/** The lines /help shows: the keys, then every command. */
export const helpLines = (commands: ReadonlyArray<SlashCommand>): ReadonlyArray<string> => [
  "Keys: Enter send · Alt+Enter or Ctrl+J new line · ↑/↓ history · Tab next agent · Esc interrupt",
  "      PgUp/PgDn scroll · Ctrl+R show reasoning · Ctrl+C clear, twice to quit · @path attach a file",
  "      !cmd run a shell command · / commands",
  ...commands.map((c) => `/${c.name.padEnd(12)} ${c.description}`)
]

/**
 * The session as the UI has it, in the shape `lathe export` renders (for a backend that cannot read the store): its
 * messages and parts, without permission decisions or subagent sessions.
 */
export const transcriptDocument = (session: Session, transcript: Transcript): SessionDocument => ({
  format: "lathe.session",
  version: 1,
  session,
  messages: transcript.messages().map((m) => ({ info: m.info, parts: m.parts.map((part) => ({ part })) })),
  subagents: []
})

/** `/cost`: tokens and cost of each step of this run, then the session's totals. */
export const costLines = (transcript: Transcript): ReadonlyArray<string> => {
  const { tokens, cost } = transcript.totals()
  const n = (v: number) => v.toLocaleString("en-US")
  const rows = transcript.steps.map(
    (s) =>
      `step ${String(s.step).padStart(3)}  in ${n(s.tokens.input).padStart(9)}  out ${n(s.tokens.output).padStart(7)}  ` +
      `cache r/w ${n(s.tokens.cache.read)}/${n(s.tokens.cache.write)}  $${s.cost.toFixed(4)}`
  )
  return [
    ...(rows.length > 0
      ? rows
      : ["No steps in this run of Lathe yet (steps of a resumed session count in the total)."]),
    `total: in ${n(tokens.input)}, out ${n(tokens.output)}, reasoning ${n(tokens.reasoning)}, cache read ` +
      `${n(tokens.cache.read)}, cache write ${n(tokens.cache.write)} · $${cost.toFixed(4)}`
  ]
}
