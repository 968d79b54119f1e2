import { readFileSync } from "node:fs"
import { join } from "node:path"
import { z } from "zod"
import { compileMatcher, type Matcher } from "./tool-names.js"

/** The events this plugin runs hooks for (Claude Code's names). */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SubagentStop",
  "SessionStart",
  "Notification"
] as const
/** An event hooks run at. */
export type HookEvent = (typeof HOOK_EVENTS)[number]

/** How long a hook may run when it names no `timeout`: 60 s, as in Claude Code. */
export const DEFAULT_TIMEOUT_SECONDS = 60

/** The `hooks` object of a Claude Code settings file or lathe.json (unknown keys are left alone). */
const HooksObject = z.record(
  z.string(),
  z.array(
    z.looseObject({
      matcher: z.string().optional(),
      hooks: z.array(
        z.looseObject({
          type: z.string(),
          command: z.string().optional(),
          timeout: z.number().positive().optional()
        })
      )
    })
  )
)
const SettingsFile = z.looseObject({ hooks: HooksObject.optional() })

/** One command to run at an event. */
export interface HookCommand {
  readonly command: string
  readonly timeoutSeconds: number
  /** The file it was defined in, for notices. */
  readonly source: string
}

/** A matcher and its commands, at one event. */
export interface HookGroup {
  readonly event: HookEvent
  readonly matches: Matcher
  readonly commands: ReadonlyArray<HookCommand>
}

/** Where hooks are read from. */
export interface HookPlaces {
  /** The person's home (`~/.claude/settings.json`). */
  readonly home: string
  /** The project root (`.claude/settings.json`, `.claude/settings.local.json`). */
  readonly root: string
  /** Whether the person trusts the project; until then its files' hooks do not run. */
  readonly trusted: boolean
  /** The `hooks` key of Lathe's merged config (an untrusted project's was already dropped), and where it came from. */
  readonly config?: { readonly hooks: unknown; readonly source: string }
}

/** What was found: the hooks to run, project files that were skipped (untrusted), and problems for notices. */
export interface LoadedHooks {
  readonly groups: ReadonlyArray<HookGroup>
  /** Project settings files with hooks that did not load because the project is not trusted. */
  readonly untrusted: ReadonlyArray<string>
  readonly problems: ReadonlyArray<string>
}

const isEvent = (name: string): name is HookEvent => (HOOK_EVENTS as ReadonlyArray<string>).includes(name)

/** Reads a settings file's `hooks`; `undefined` when the file does not exist. */
const readSettings = (file: string): { readonly hooks: unknown } | { readonly problem: string } | undefined => {
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch {
    return undefined
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { problem: `it is not valid JSON (${error instanceof Error ? error.message : String(error)})` }
  }
  const parsed = SettingsFile.safeParse(value)
  return parsed.success ? { hooks: parsed.data.hooks } : { problem: z.prettifyError(parsed.error) }
}

/** Turns one `hooks` object into groups, naming what cannot run. */
const groupsOf = (hooks: unknown, source: string, problems: Array<string>): Array<HookGroup> => {
  if (hooks === undefined) return []
  const parsed = HooksObject.safeParse(hooks)
  if (!parsed.success) {
    problems.push(`The hooks in ${source} were skipped: ${z.prettifyError(parsed.error)}`)
    return []
  }
  const groups: Array<HookGroup> = []
  for (const [event, entries] of Object.entries(parsed.data)) {
    if (!isEvent(event)) {
      problems.push(`The ${event} hooks in ${source} do not run: Lathe runs ${HOOK_EVENTS.join(", ")}.`)
      continue
    }
    for (const entry of entries) {
      const matches = compileMatcher(entry.matcher)
      if (typeof matches === "string") {
        problems.push(
          `A ${event} hook in ${source} was skipped: its matcher ${JSON.stringify(entry.matcher)} ${matches}.`
        )
        continue
      }
      const commands: Array<HookCommand> = []
      for (const handler of entry.hooks) {
        if (handler.type !== "command" || !handler.command?.trim()) {
          problems.push(
            `A ${event} hook in ${source} was skipped: only "type": "command" hooks with a "command" run in Lathe.`
          )
          continue
        }
        commands.push({ command: handler.command, timeoutSeconds: handler.timeout ?? DEFAULT_TIMEOUT_SECONDS, source })
      }
      if (commands.length > 0) groups.push({ event, matches, commands })
    }
  }
  return groups
}

/**
 * Reads the hooks: the person's `~/.claude/settings.json`, Lathe's config `hooks`, then the project's
 * `.claude/settings.json` and `.claude/settings.local.json` (only in a trusted project).
 */
export const loadHooks = (places: HookPlaces): LoadedHooks => {
  const problems: Array<string> = []
  const groups: Array<HookGroup> = []
  const untrusted: Array<string> = []
  const personal = join(places.home, ".claude", "settings.json")
  const project = [join(places.root, ".claude", "settings.json"), join(places.root, ".claude", "settings.local.json")]
  const add = (file: string) => {
    const read = readSettings(file)
    if (read === undefined) return
    if ("problem" in read) problems.push(`The hooks in ${file} were skipped: ${read.problem}`)
    else groups.push(...groupsOf(read.hooks, file, problems))
  }
  add(personal)
  if (places.config !== undefined) groups.push(...groupsOf(places.config.hooks, places.config.source, problems))
  for (const file of project) {
    if (file === personal) continue
    if (places.trusted) add(file)
    else {
      const read = readSettings(file)
      if (read !== undefined && "hooks" in read && read.hooks !== undefined) untrusted.push(file)
    }
  }
  return { groups, untrusted, problems }
}
