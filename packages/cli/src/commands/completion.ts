import { defineCommand, parseCommand, suggest, usageError } from "../command-kit.js"
import { type CompletionNode, completionNode, LISTS, type ListName, SHELLS, type Shell } from "../completion-scripts.js"
import type { CliIO, Command } from "../io.js"
import { commandSpecs, rootSpec } from "./specs.js"

/** `lathe completion`, declared once for the command kit. */
export const completionSpec = defineCommand({
  name: "completion",
  usage: ["bash|zsh|fish"],
  description: `Prints a script that makes the shell complete lathe's commands, subcommands and options, the values of options
that take a fixed set (--format, --variant…), and agent and model names (--agent, -m: the agents of the project
you are in, the models of the providers you have set up). Load it now, or install it for every new shell:
  bash  source <(lathe completion bash)     or  lathe completion bash > ~/.local/share/bash-completion/completions/lathe
  zsh   source <(lathe completion zsh)      or  lathe completion zsh > "\${fpath[1]}/_lathe"   (after compinit)
  fish  lathe completion fish | source      or  lathe completion fish > ~/.config/fish/completions/lathe.fish
The script holds every command and option itself, so Tab starts no process; only agent and model names are
asked of lathe when an option takes one. Write it again after upgrading lathe.`,
  positionals: { name: "<shell>", min: 1, max: 1 },
  footer: "Exit codes: 0 printed, 2 bad usage."
})

/** A top-level command as main.ts's table lists it. */
export interface TableEntry {
  readonly name: string
  readonly summary: string
}

/** `lathe` and every command of the table, with their options, as the completion scripts take them. */
export const completionTree = async (table: ReadonlyArray<TableEntry>): Promise<CompletionNode> => {
  const [root, ...specs] = await Promise.all([
    rootSpec(),
    ...table.map(async (entry) => {
      if (entry.name === "completion") return completionSpec
      const load = Object.hasOwn(commandSpecs, entry.name) ? commandSpecs[entry.name] : undefined
      // A command whose module fails to load still completes by name: the others keep their options.
      return load === undefined ? undefined : await load().catch(() => undefined)
    })
  ])
  const top = completionNode(root)
  const subcommands = table.map((entry, i) => {
    const spec = specs[i]
    return spec === undefined
      ? { path: `lathe ${entry.name}`, summary: entry.summary, options: [], subcommands: [] }
      : entry.name === "completion"
        ? { ...completionNode(spec, entry.summary), args: Object.keys(SHELLS) }
        : completionNode(spec, entry.summary)
  })
  const version = {
    names: ["--version", "-v"],
    takesValue: false,
    value: { kind: "none" },
    description: "Show the version"
  } as const
  return { ...top, options: [...top.options, version], subcommands }
}

/** What a `lathe <command> --json` printed to stdout, and its exit code; what it wrote to stderr is dropped. */
const captured = async (command: Command, args: ReadonlyArray<string>, io: CliIO) => {
  let stdout = ""
  const code = await command(args, {
    ...io,
    stdout: (text) => {
      stdout += text
    },
    stderr: () => {}
  })
  return { code, stdout }
}

const jsonArray = (text: string): ReadonlyArray<Record<string, unknown>> => {
  try {
    const value: unknown = JSON.parse(text)
    return Array.isArray(value) ? value : []
  } catch {
    return []
  }
}

/**
 * The names a completion script asks for, one a line: the primary agents of this directory's project (what `--agent`
 * takes), or the models of the providers set up (`provider/model`, what `-m` takes; with none set up, every model of
 * the catalogue, as `lathe models --json` lists them). Taken from `lathe agents --json` and `lathe models --json`,
 * whose shapes are documented: config, plugins and the catalogue are read, no agent starts and nothing goes to the
 * network.
 */
const printList = async (list: ListName, io: CliIO): Promise<number> => {
  if (list === "agents") {
    const { agentsCommand } = await import("./agents.js")
    const { code, stdout } = await captured(agentsCommand, ["--json"], io)
    const names = jsonArray(stdout).flatMap((agent) =>
      typeof agent.name === "string" && agent.mode !== "subagent" ? [agent.name] : []
    )
    io.stdout(names.map((name) => `${name}\n`).join(""))
    return code
  }
  const { modelsCommand } = await import("./models.js")
  const { code, stdout } = await captured(modelsCommand, ["--json"], io)
  const refs = jsonArray(stdout).flatMap((model) => (typeof model.ref === "string" ? [model.ref] : []))
  io.stdout([...new Set(refs)].map((ref) => `${ref}\n`).join(""))
  return code
}

const isShell = (word: string): word is Shell => Object.hasOwn(SHELLS, word)
const isList = (word: string): word is ListName => (LISTS as ReadonlyArray<string>).includes(word)

/**
 * `lathe completion bash|zsh|fish`: the completion script of `table`'s commands. `lathe completion --list
 * agents|models` (what the scripts run for agent and model names) is left out of the help: it is for them.
 */
export const completionCommand =
  (table: ReadonlyArray<TableEntry>): Command =>
  async (args, io) => {
    if (args[0] === "--list") {
      const list = args[1] ?? ""
      if (args.length !== 2 || !isList(list))
        return usageError(completionSpec, io, `--list takes ${LISTS.join(" or ")}.`)
      return printList(list, io)
    }
    const parsed = parseCommand(completionSpec, args, io)
    if (typeof parsed === "number") return parsed
    const shell = parsed.positionals[0] ?? ""
    if (!isShell(shell)) {
      const near = suggest(shell, Object.keys(SHELLS))
      return usageError(
        completionSpec,
        io,
        `no completion for the shell "${shell}": bash, zsh or fish.`,
        near ? `Did you mean ${near}?` : undefined
      )
    }
    io.stdout(SHELLS[shell](await completionTree(table)))
    return 0
  }
