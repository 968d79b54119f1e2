import { statSync } from "node:fs"
import { readdir, readFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import type { PluginLogger } from "@lathe/plugin"
import type { ParsedSkill, parseSkillFile } from "./skill-file.js"

// The parser (and `yaml`, which it needs) is loaded only once there is a SKILL.md to parse: most runs have none.
let parser: Promise<typeof parseSkillFile> | undefined
const loadParser = (): Promise<typeof parseSkillFile> =>
  (parser ??= import("./skill-file.js").then((module) => module.parseSkillFile))

/** Where a skill was found: the project (only read when trusted) or the person's own folders. */
export type SkillScope = "project" | "global"

/** A discovered skill. */
export interface Skill extends ParsedSkill {
  /** The skill's folder, absolute. */
  readonly directory: string
  /** The `SKILL.md` it was read from, absolute. */
  readonly path: string
  readonly scope: SkillScope
}

/** A folder searched for `<skill>/SKILL.md`. */
export interface SkillRoot {
  readonly directory: string
  readonly scope: SkillScope
}

/** What discovery needs: the plugin context's fields, so tests and other hosts can call it directly. */
export interface DiscoverOptions {
  /** The project root. */
  readonly root: string
  /** Whether the project is trusted; project folders are skipped (with one warning) when not. */
  readonly trusted: boolean
  /** Lathe's config dir (`~/.config/lathe`). */
  readonly configDir: string
  readonly home: string
  readonly log: PluginLogger
}

/**
 * The folders searched, highest precedence first: the project's `.lathe/skills`, `.agents/skills`, `.claude/skills`,
 * `.opencode/skill`, `.opencode/skills`, then `<configDir>/skills`, `<home>/.agents/skills` and
 * `<home>/.claude/skills`.
 */
export const skillRoots = (options: Pick<DiscoverOptions, "root" | "configDir" | "home">): ReadonlyArray<SkillRoot> => [
  ...[".lathe/skills", ".agents/skills", ".claude/skills", ".opencode/skill", ".opencode/skills"].map((dir) => ({
    directory: resolve(options.root, dir),
    scope: "project" as const
  })),
  { directory: resolve(options.configDir, "skills"), scope: "global" },
  { directory: resolve(options.home, ".agents", "skills"), scope: "global" },
  { directory: resolve(options.home, ".claude", "skills"), scope: "global" }
]

/**
 * Whether `path` is a folder. Synchronous: run at every start for each of the eight roots (most of them absent), where
 * an `fs.promises.stat` each took a round trip through libuv's thread pool and the event loop for a `stat` that
 * answers in microseconds (same wall time to the first request, measured; less work for the loop).
 */
const isDirectory = (path: string): boolean => statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The skills of one root, in folder-name order; folders without a `SKILL.md` are not skills and are passed over. */
const readRoot = async (root: SkillRoot, log: PluginLogger): Promise<ReadonlyArray<Skill>> => {
  const entries = await readdir(root.directory).catch((error: unknown) => {
    log.warn(`Could not list skills in ${root.directory}: ${errorText(error)}`, { path: root.directory })
    return [] as Array<string>
  })
  const skills: Array<Skill> = []
  for (const folder of entries.sort()) {
    const directory = join(root.directory, folder)
    const path = join(directory, "SKILL.md")
    if (!isDirectory(directory)) continue
    let text: string
    try {
      text = await readFile(path, "utf8")
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue
      log.warn(`Skipped skill ${path}: it could not be read: ${errorText(error)}`, { path })
      continue
    }
    const result = (await loadParser())(text, folder)
    if (!result.ok) {
      log.warn(`Skipped skill ${path}: ${result.problem}.`, { path, problem: result.problem })
      continue
    }
    skills.push({ ...result.skill, directory, path, scope: root.scope })
  }
  return skills
}

/**
 * Finds every valid skill, sorted by name. When a name is found more than once, the folder of higher precedence
 * (see {@link skillRoots}) wins and the others are reported at info level. Invalid skills are reported with
 * `log.warn` (path and problem) and left out; nothing here throws for a bad file.
 */
export const discoverSkills = async (options: DiscoverOptions): Promise<ReadonlyArray<Skill>> => {
  const roots = skillRoots(options)
  const present: Array<SkillRoot> = []
  for (const root of roots) if (isDirectory(root.directory)) present.push(root)

  const skipped = options.trusted ? [] : present.filter((root) => root.scope === "project")
  if (skipped.length > 0)
    options.log.warn(
      `Ignored the project's skills in ${skipped.map((root) => root.directory).join(", ")}: this project is not ` +
        `trusted. Run \`lathe trust\` in ${options.root} to load them.`,
      { paths: skipped.map((root) => root.directory) }
    )

  const found = new Map<string, Skill>()
  for (const root of present) {
    if (skipped.includes(root)) continue
    for (const skill of await readRoot(root, options.log)) {
      const winner = found.get(skill.name)
      if (winner) {
        options.log.info(`Skill "${skill.name}" in ${skill.path} is shadowed by ${winner.path}, which is used.`, {
          name: skill.name,
          used: winner.path,
          shadowed: skill.path
        })
        continue
      }
      found.set(skill.name, skill)
    }
  }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}
