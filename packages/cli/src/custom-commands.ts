import type { Dirent } from "node:fs"
import { readdir, readFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { opencodeCommands } from "@lathe/core"
import type { PluginCommand } from "@lathe/plugin"
import { isMap, parseDocument } from "yaml"
import { z } from "zod"
import type { Contributions } from "./contributions.js"

/** A prompt template written as a markdown file, run as `/name arguments`. */
export interface CustomCommand {
  /** The file name without .md; subfolders joined with ":" (frontend/component.md → frontend:component). */
  readonly name: string
  /** Front matter `description`, else the first line of the body, cut to 80 chars. */
  readonly description: string
  /** The agent to run the prompt with (front matter `agent`). */
  readonly agent?: string
  /** The `provider/model` to run the prompt with (front matter `model`). */
  readonly model?: string
  /** The body: the prompt, with `$ARGUMENTS` and `$1`…`$9` placeholders. */
  readonly template: string
  /** The file path. */
  readonly source: string
}

/**
 * The front matter of a command file. Unknown keys (Claude Code's `allowed-tools`, `argument-hint`, …) are accepted
 * and ignored, so `.claude/commands` files load unchanged.
 */
const CommandFrontMatter = z.looseObject({
  description: z.string().optional(),
  agent: z.string().optional(),
  model: z.string().optional()
})

const DESCRIPTION_LIMIT = 80

/** Every `.md` file under `directory` as [path, path relative to directory], sorted; a missing directory is empty. */
const markdownFiles = async (directory: string): Promise<ReadonlyArray<readonly [string, string]>> => {
  const found: Array<readonly [string, string]> = []
  const visit = async (relativeDir: string): Promise<void> => {
    const entries: Array<Dirent> = await readdir(join(directory, relativeDir), { withFileTypes: true }).catch(() => [])
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      const relativePath = relativeDir === "" ? entry.name : `${relativeDir}/${entry.name}`
      if (entry.isDirectory()) await visit(relativePath)
      else if (entry.isFile() && entry.name.endsWith(".md")) found.push([join(directory, relativePath), relativePath])
    }
  }
  await visit("")
  return found
}

const OPENING = /^\uFEFF?---[ \t]*\r?\n/
const CLOSING = /^---[ \t]*\r?$/m

/** A command from one file's text, or what is wrong with the file (a sentence that says how to fix it). */
const parseCommand = (source: string, name: string, text: string): CustomCommand | string => {
  let body = text.replace(/^\uFEFF/, "")
  let data: Record<string, unknown> = {}
  const opening = OPENING.exec(text)
  if (opening) {
    const rest = text.slice(opening[0].length)
    const closing = CLOSING.exec(rest)
    if (!closing) return 'the front matter opened with "---" is never closed: add a line "---" after it'
    const document = parseDocument(rest.slice(0, closing.index))
    const error = document.errors[0]
    if (error) return `the front matter is not valid YAML (${error.message.split("\n")[0]}): fix it or remove it`
    const contents = document.contents
    if (contents !== null && !isMap(contents)) {
      return "the front matter must be `key: value` lines (description, agent, model)"
    }
    data = (document.toJS() as Record<string, unknown> | null) ?? {}
    body = rest.slice(closing.index + closing[0].length).replace(/^\n/, "")
  }
  const parsed = CommandFrontMatter.safeParse(data)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    return `front matter ${issue?.path.map(String).join(".") || "field"}: ${issue?.message ?? "invalid"}; write it as a quoted string`
  }
  const template = body.trim()
  const { description, agent, model } = parsed.data
  return {
    name,
    description: description?.trim() || describe(template),
    ...(agent !== undefined ? { agent } : {}),
    ...(model !== undefined ? { model } : {}),
    template,
    source
  }
}

/** What {@link loadCustomCommands} found. */
export interface LoadedCommands {
  readonly commands: ReadonlyArray<CustomCommand>
  /** Broken files: path, what is wrong, how to fix it. */
  readonly problems: ReadonlyArray<string>
  /**
   * In an untrusted project: the notice naming the project's commands that lost their `model` or `agent` (it starts
   * with "Ignored from untrusted", like the config's); absent when none did.
   */
  readonly ignored?: string
}

/** The keys of a project's command that choose what runs it, which only a trusted project may set. */
const CHOOSERS = ["model", "agent"] as const

/** Loads `<root>/.lathe/commands/**\/*.md`, then (compatibility) `<root>/.claude/commands`, `<root>/.opencode/command`
 * and `.opencode/commands`, the `command` entries of `<root>/opencode.json(c)`, then the user's own:
 * `<configDir>/commands`, OpenCode's `~/.config/opencode/command(s)` and its `opencode.json(c)` entries; the first
 * definition of a name wins. A file with broken front matter is reported in `problems` (path + what is wrong + how
 * to fix), never thrown. Unless `trusted`, the project's commands lose `model` and `agent` (a project may not choose
 * your model, or an agent wider than yours), named in `ignored`; the person's own keep them. */
export const loadCustomCommands = async (
  root: string,
  configDir: string,
  options: { readonly trusted: boolean }
): Promise<LoadedCommands> => {
  const commands = new Map<string, CustomCommand>()
  const problems: Array<string> = []
  const opencodeHome = join(dirname(configDir), "opencode")
  const opencode = (dir: string) => [join(dir, "command"), join(dir, "commands")]
  const places = [
    [join(root, ".lathe", "commands"), join(root, ".claude", "commands"), ...opencode(join(root, ".opencode"))],
    [join(configDir, "commands"), ...opencode(opencodeHome)]
  ] as const
  const narrowed: Array<string> = []
  for (const [index, directories] of places.entries()) {
    const before = new Set(commands.keys())
    await loadDirectories(directories, commands, problems)
    for (const command of await opencodeCommands(index === 0 ? root : opencodeHome)) {
      if (commands.has(command.name) || /\s/.test(command.name)) continue
      commands.set(command.name, { ...command, description: command.description ?? describe(command.template) })
    }
    if (index > 0 || options.trusted) continue
    for (const [name, command] of commands) {
      if (before.has(name)) continue
      const chosen = CHOOSERS.filter((key) => command[key] !== undefined)
      if (chosen.length === 0) continue
      const { model: _model, agent: _agent, ...kept } = command
      commands.set(name, kept)
      narrowed.push(`${command.source}: command ${name} ${chosen.join(", ")}`)
    }
  }
  const ignored =
    narrowed.length === 0
      ? undefined
      : `Ignored from untrusted ${narrowed.join("; ")} (the command runs with your agent and model). ` +
        `Run \`lathe trust\` in ${root} to trust this folder.`
  return { commands: [...commands.values()], problems, ...(ignored !== undefined ? { ignored } : {}) }
}

const describe = (template: string): string => {
  const firstLine = (template.trim().split("\n")[0] ?? "").replace(/^#+\s*/, "").trim()
  return firstLine.length > DESCRIPTION_LIMIT ? `${firstLine.slice(0, DESCRIPTION_LIMIT - 1)}…` : firstLine
}

const loadDirectories = async (
  directories: ReadonlyArray<string>,
  commands: Map<string, CustomCommand>,
  problems: Array<string>
): Promise<void> => {
  for (const directory of directories) {
    for (const [source, relativePath] of await markdownFiles(directory)) {
      const name = relativePath.slice(0, -".md".length).split("/").join(":")
      if (commands.has(name)) continue
      if (/\s/.test(name) || name === "") {
        problems.push(`${source}: a command name cannot contain spaces; rename the file (e.g. with "-" for spaces)`)
        continue
      }
      const text = await readFile(source, "utf8").catch((error: Error) => error)
      if (text instanceof Error) {
        problems.push(`${source}: cannot be read (${text.message}); check its permissions`)
        continue
      }
      const command = parseCommand(source, name, text)
      if (typeof command === "string") problems.push(`${source}: ${command}`)
      else commands.set(name, command)
    }
  }
}

/** Splits arguments like a shell: whitespace separates, single and double quotes group, backslash escapes. */
const splitArguments = (args: string): ReadonlyArray<string> => {
  const words: Array<string> = []
  let word = ""
  let started = false
  let quote: "'" | '"' | undefined
  for (let i = 0; i < args.length; i++) {
    const c = args[i] ?? ""
    if (quote !== undefined) {
      if (c === quote) quote = undefined
      else if (c === "\\" && quote === '"' && (args[i + 1] === '"' || args[i + 1] === "\\")) word += args[++i]
      else word += c
    } else if (c === "'" || c === '"') {
      quote = c
      started = true
    } else if (c === "\\" && i + 1 < args.length) {
      word += args[++i]
      started = true
    } else if (/\s/.test(c)) {
      if (started) words.push(word)
      word = ""
      started = false
    } else {
      word += c
      started = true
    }
  }
  if (started) words.push(word)
  return words
}

/** Fills a template: `$ARGUMENTS` → all arguments, `$1`…`$9` → positional arguments (shell-like split, quotes
 * respected; a missing one becomes ""); when the template has neither and arguments were given, they are appended
 * after a blank line. */
export const expandTemplate = (template: string, args: string): string => {
  const all = args.trim()
  if (!/\$ARGUMENTS|\$[1-9]/.test(template)) return all === "" ? template : `${template}\n\n${all}`
  const positional = splitArguments(all)
  return template.replace(/\$ARGUMENTS|\$([1-9])/g, (_, digit: string | undefined) =>
    digit === undefined ? all : (positional[Number(digit) - 1] ?? "")
  )
}

/** A command file as a plugin command: its arguments fill the template as typed (see {@link expandTemplate}). */
export const commandOfFile = (command: CustomCommand): PluginCommand => ({
  name: command.name,
  description: command.description,
  ...(command.agent !== undefined ? { agent: command.agent } : {}),
  ...(command.model !== undefined ? { model: command.model } : {}),
  run: async (_words, input) => expandTemplate(command.template, input.text)
})

/**
 * The command files as the contributions of a session attached to a server (whose plugins run there, not here): read
 * once, when first listed; `warn` hears about broken files, and about what an untrusted (`trusted` false) project's
 * commands lost. No resources.
 */
export const commandFileContributions = (
  root: string,
  configDir: string,
  trusted: boolean,
  warn: (problem: string) => void
): Contributions => {
  let loaded: Promise<ReadonlyArray<CustomCommand>> | undefined
  const load = () => {
    loaded ??= loadCustomCommands(root, configDir, { trusted }).then(({ commands, problems, ignored }) => {
      for (const problem of problems) warn(problem)
      if (ignored !== undefined) warn(ignored)
      return commands
    })
    return loaded
  }
  return {
    commands: async () =>
      (await load()).map((command) => ({
        name: command.name,
        description: command.description,
        arguments: [],
        ...(command.agent !== undefined ? { agent: command.agent } : {}),
        ...(command.model !== undefined ? { model: command.model } : {}),
        plugin: "command-files"
      })),
    resources: async () => [],
    expand: async (name, text) => {
      const command = (await load()).find((c) => c.name === name)
      if (!command) return undefined
      return {
        text: expandTemplate(command.template, text),
        parts: [],
        ...(command.agent !== undefined ? { agent: command.agent } : {}),
        ...(command.model !== undefined ? { model: command.model } : {})
      }
    },
    attach: async () => ({ parts: [], problems: [] }),
    watch: () => () => undefined
  }
}
