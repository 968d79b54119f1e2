import type { CliIO, Command } from "./io.js"
import { takeLogLevel } from "./log-flag.js"
import { editDistance, suggest } from "./suggest.js"
import { cliVersion, versionLine } from "./version.js"

const version = cliVersion

const commands: Readonly<Record<string, { readonly summary: string; readonly load: () => Promise<Command> }>> = {
  run: {
    summary: 'Run the agent on a task once: lathe run "fix the failing test"',
    load: async () => (await import("./commands/run.js")).runCommand
  },
  undo: {
    summary: "Take back the last turn: its files and messages (--list, <n>, --step, --force)",
    load: async () => (await import("./commands/undo.js")).revertCommand("undo")
  },
  redo: {
    summary: "Bring back what lathe undo took away (files and messages)",
    load: async () => (await import("./commands/undo.js")).revertCommand("redo")
  },
  session: {
    summary: "List this project's sessions (session list), or print one: messages, calls, tokens (session show)",
    load: async () => (await import("./commands/session.js")).sessionCommand
  },
  export: {
    summary: "Write a session as a Markdown transcript or a JSON document (lathe export <id> --format md|json)",
    load: async () => (await import("./commands/export.js")).exportCommand
  },
  import: {
    summary: "Read a session that lathe export --format json wrote back into the store",
    load: async () => (await import("./commands/export.js")).importCommand
  },
  serve: {
    summary: "Run the headless server (HTTP + SSE API) for editors, scripts and attached clients",
    load: async () => (await import("./commands/serve.js")).serveCommand(version())
  },
  web: {
    summary: "Run lathe serve with a web app: sessions as timelines, per-step time, tokens and cost, asks to answer",
    load: async () => (await import("./commands/web.js")).webCommand(version())
  },
  acp: {
    summary: "Speak the Agent Client Protocol on stdio, for editors (Zed, JetBrains, Neovim): see docs/editors.md",
    load: async () => (await import("./commands/acp.js")).acpCommand
  },
  runner: {
    summary: "Join a cluster as a runner that holds sessions (shared Postgres; see docs/scale.md)",
    load: async () => (await import("./commands/runner.js")).runnerCommand
  },
  cluster: {
    summary: "Show a cluster: runners, their shards and sessions (lathe cluster status --store URL)",
    load: async () => (await import("./commands/cluster.js")).clusterCommand
  },
  models: {
    summary: "List the models Lathe knows: limits, prices, abilities, where each key comes from",
    load: async () => (await import("./commands/models.js")).modelsCommand
  },
  auth: {
    summary: "Sign in to providers or store their API keys (lathe auth login [provider], list, logout <provider>)",
    load: async () => (await import("./commands/auth.js")).authCommand
  },
  agents: {
    summary: "List the agents of this project (name, mode, where defined)",
    load: async () => (await import("./commands/agents.js")).agentsCommand
  },
  plugin: {
    summary: "List the plugins this project loads (and why some did not), or scaffold a new one",
    load: async () => (await import("./commands/plugin.js")).pluginCommand
  },
  mcp: {
    summary: "MCP servers: list (state and why), tools <name>, add/remove, auth/logout <name>",
    load: async () => (await import("./commands/mcp.js")).mcpCommand
  },
  lsp: {
    summary: "Show the project's language servers: where each is found, which run now (lathe lsp status)",
    load: async () => (await import("./commands/lsp.js")).lspCommand
  },
  config: {
    summary: "Show the merged configuration, where each part came from, any problem; config schema: its JSON Schema",
    load: async () => (await import("./commands/config.js")).configCommand
  },
  permissions: {
    summary: "Explain which rule decides a permission request, or show the audit trail",
    load: async () => (await import("./commands/permissions.js")).permissionsCommand
  },
  doctor: {
    summary: "Check Node, git, ripgrep, the sandbox bash runs in, and this project's config and trust",
    load: async () => (await import("./commands/doctor.js")).doctorCommand
  },
  trust: {
    summary: "Trust this project's config (its allow rules, plugins and provider settings)",
    load: async () => (await import("./commands/trust.js")).trustCommand
  },
  untrust: {
    summary: "Take back trust from this project's config, so it may only narrow what Lathe does",
    load: async () => (await import("./commands/trust.js")).untrustCommand
  },
  github: {
    summary: "Lathe in GitHub Actions: github install writes the workflow, github run answers /lathe mentions",
    load: async () => (await import("./commands/github.js")).githubCommand
  },
  completion: {
    summary: "Print a shell completion script: lathe completion bash|zsh|fish (commands, options, agents, models)",
    load: async () =>
      (await import("./commands/completion.js")).completionCommand(
        Object.entries(commands).map(([name, command]) => ({ name, summary: command.summary }))
      )
  }
}

/** The options of `lathe` itself (the interactive session). */
const INTERACTIVE_FLAGS = new Set([
  "-c",
  "--continue",
  "-s",
  "--session",
  "--agent",
  "-m",
  "--model",
  "-f",
  "--file",
  "--attach",
  "--token"
])

/**
 * The command `word` is a typo of, if it is one: a single word (no whitespace) within edit distance 2 of a command
 * name (the closest wins). Anything else that is not a command is a prompt for the interactive session.
 */
export const nearCommand = (word: string): string | undefined => {
  if (/\s/.test(word)) return undefined
  const lower = word.toLowerCase()
  let best: { readonly name: string; readonly distance: number } | undefined
  for (const name of [...Object.keys(commands), "help"]) {
    const distance = editDistance(lower, name)
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name, distance }
  }
  return best?.name
}

const help = () =>
  [
    "lathe — a coding agent for the terminal",
    "",
    "Usage: lathe [--continue | --session <id>] [--agent <name>] [--model <p/m>] [prompt]   the interactive session",
    "       lathe -f <file>... [those options] [prompt]                                     the same, with files attached",
    "       lathe --attach <url> [--token <token>] [those options] [prompt]                 the same, on a lathe serve",
    "       lathe <command> [options]",
    "",
    '  lathe "fix the failing test" opens the session with that prompt sent (without a terminal, plain line mode takes',
    "  it as its first line, then reads stdin). A single word within 2 letters of a command (lathe rn, lathe sesion) is",
    '  taken for a typo and refused with "did you mean"; a prompt of one such word: lathe -- "word", or lathe run "word".',
    "",
    "Commands:",
    ...Object.entries(commands).map(([name, command]) => `  ${name.padEnd(12)} ${command.summary}`),
    "",
    "Options:",
    "  -h, --help     Show help (also: lathe <command> --help)",
    "  -v, --version  Show the version",
    "  --log-level <debug|info|off>  Log steps and tool calls to <data dir>/logs (LATHE_LOG; docs/logging.md)",
    "",
    "Configuration: lathe.json(c) in the project, ~/.config/lathe/lathe.json(c), LATHE_MODEL, LATHE_BASE_URL.",
    ""
  ].join("\n")

/** Runs the CLI with `argv` (without `node` and the script) and returns the exit code. */
export const main = async (given: ReadonlyArray<string>, givenIO: CliIO): Promise<number> => {
  // `--log-level` is global: taken out here, it reaches every command as LATHE_LOG (docs/logging.md).
  const logged = takeLogLevel(given, givenIO)
  if ("error" in logged) {
    givenIO.stderr(`lathe: ${logged.error}\n`)
    return 2
  }
  const { argv, io } = logged
  const [first, ...rest] = argv
  // No command (or only the session options): the interactive session.
  if (first === undefined || (first.startsWith("-") && INTERACTIVE_FLAGS.has(first.split("=")[0] ?? ""))) {
    const { interactiveCommand } = await import("./commands/interactive.js")
    return interactiveCommand(argv, io)
  }
  if (first === "-h" || first === "--help" || first === "help") {
    io.stdout(help())
    return 0
  }
  if (first === "-v" || first === "--version") {
    io.stdout(`${versionLine()}\n`)
    return 0
  }
  if (first === "--") {
    // Everything after `--` is the prompt, even a word that looks like a command.
    const { interactiveCommand } = await import("./commands/interactive.js")
    return interactiveCommand(argv, io)
  }
  const command = commands[first]
  if (command) return (await command.load())(rest, io)
  if (first.startsWith("-")) {
    // An option of `lathe` itself that is not one: the nearest of them (the session's, --help, --version).
    const near = suggest(first.replace(/^-+/, "").split("=")[0] ?? "", [
      ...[...INTERACTIVE_FLAGS].filter((flag) => flag.startsWith("--")).map((flag) => flag.slice(2)),
      "help",
      "version"
    ])
    const hint = near === undefined ? "" : ` Did you mean --${near}?`
    io.stderr(`lathe: unknown option ${first}.${hint} Run lathe --help for the commands and options.\n`)
    return 2
  }
  const near = nearCommand(first)
  if (near !== undefined || first.trim() === "") {
    const hint = near === undefined ? "" : ` Did you mean \`lathe ${near}\`?`
    io.stderr(`lathe: unknown command "${first}".${hint} Run \`lathe --help\` to see the commands.\n`)
    return 2
  }
  // Not a command and not a typo of one: a prompt for the interactive session.
  const { interactiveCommand } = await import("./commands/interactive.js")
  return interactiveCommand(argv, io)
}
