import { readdir } from "node:fs/promises"
import { join, relative } from "node:path"
import { type AnyTool, evaluate, type Ruleset, Tool } from "@lathe/plugin"
import { z } from "zod"
import type { Skill } from "./discover.js"
import { toolSchema } from "./tool-schemas.js"

/** At most this many other files of a skill folder are listed in the tool's output. */
export const MAX_LISTED_FILES = 100

/** The `skill` tool's arguments. */
export const SkillInput = z.object({
  name: z.string().min(1).describe("The name of the skill to load, exactly as listed in the system prompt.")
})

/** What the `skill` tool records in its result's metadata. */
export interface SkillMetadata extends Record<string, unknown> {
  readonly name: string
  readonly directory: string
  /** The other files of the skill folder, relative to it (at most {@link MAX_LISTED_FILES}). */
  readonly files: ReadonlyArray<string>
  readonly allowedTools: ReadonlyArray<string>
}

const DESCRIPTION = [
  "Loads a skill: instructions (and often scripts, templates or references) for a specialised task.",
  "The available skills are listed in the system prompt with a description of when each applies.",
  "When a task matches a skill, call this tool with its name before starting, then follow the instructions.",
  "The result also gives the skill's folder as an absolute path and its other files: read them only when the",
  "instructions call for them."
].join(" ")

/** Whether the ruleset lets an agent load `name` (anything but a deciding `deny`). */
export const mayLoad = (name: string, ruleset: Ruleset): boolean => evaluate("skill", name, ruleset).action !== "deny"

/** The files under `directory` except its `SKILL.md`, relative and sorted, stopping after `limit + 1`. */
const otherFiles = async (directory: string, limit: number): Promise<Array<string>> => {
  const files: Array<string> = []
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      if (files.length > limit) return
      const path = join(dir, entry.name)
      if (entry.isDirectory()) await walk(path)
      else if (path !== join(directory, "SKILL.md")) files.push(relative(directory, path))
    }
  }
  await walk(directory)
  return files
}

/**
 * The `skill { name }` tool over a fixed list of skills. Asks the `skill` permission with the name as pattern,
 * then returns the body, the skill folder's absolute path and its other files. An unknown name fails with the
 * list of skills that exist.
 */
export const createSkillTool = (skills: ReadonlyArray<Skill>): AnyTool => {
  const byName = new Map(skills.map((skill) => [skill.name, skill]))
  const tool = Tool.define("skill", {
    jsonSchema: toolSchema("skill"),
    description: DESCRIPTION,
    parameters: SkillInput,
    mutates: false,
    // The model keeps following a loaded skill's instructions: its text is never pruned.
    prunable: false,
    execute: async ({ name }, ctx) => {
      const skill = byName.get(name)
      if (!skill) {
        const known = skills.map((s) => s.name)
        throw new Error(
          known.length === 0
            ? `There is no skill named "${name}": no skills are installed.`
            : `There is no skill named "${name}". Available skills: ${known.join(", ")}.`
        )
      }
      await ctx.ask({ permission: "skill", patterns: [name], always: [name], metadata: { path: skill.path } })
      const found = await otherFiles(skill.directory, MAX_LISTED_FILES)
      const files = found.slice(0, MAX_LISTED_FILES)
      const more = found.length > files.length ? ["- … (more files not listed)"] : []
      const output = [
        `<skill name="${skill.name}">`,
        skill.body,
        "</skill>",
        "",
        `Skill folder: ${skill.directory}`,
        "Paths in the instructions are relative to this folder; read other files only when they are needed.",
        ...(files.length > 0 ? ["Other files in the folder:", ...files.map((file) => `- ${file}`), ...more] : [])
      ].join("\n")
      const metadata: SkillMetadata = {
        name: skill.name,
        directory: skill.directory,
        files,
        allowedTools: skill.allowedTools
      }
      return { title: `Loaded skill ${skill.name}`, output, metadata }
    }
  })
  return tool as AnyTool
}
