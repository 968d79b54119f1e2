/**
 * @lathe/skills: finds `SKILL.md` files in the project's and the person's skill folders, lists them (name and
 * description) in the system prompt, and contributes the `skill` tool that loads one on demand.
 *
 * ```json
 * { "plugin": ["@lathe/skills"], "permission": { "skill": { "*": "allow", "internal-*": "deny" } } }
 * ```
 */
import { definePlugin, type Plugin, type Ruleset } from "@lathe/core"
import { discoverSkills, type Skill } from "./discover.js"
import { createSkillTool, mayLoad } from "./skill-tool.js"

export {
  type DiscoverOptions,
  discoverSkills,
  type Skill,
  type SkillRoot,
  type SkillScope,
  skillRoots
} from "./discover.js"
export {
  MAX_DESCRIPTION_LENGTH,
  MAX_NAME_LENGTH,
  nameProblem,
  type ParsedSkill,
  type ParseResult,
  parseSkillFile,
  SkillFrontMatter
} from "./skill-file.js"
export { createSkillTool, MAX_LISTED_FILES, mayLoad, SkillInput, type SkillMetadata } from "./skill-tool.js"

/**
 * The system prompt block listing the skills `ruleset` lets the agent load (name and description, never the body),
 * or undefined when there are none.
 */
export const skillsBlock = (skills: ReadonlyArray<Skill>, ruleset: Ruleset): string | undefined => {
  const allowed = skills.filter((skill) => mayLoad(skill.name, ruleset))
  if (allowed.length === 0) return undefined
  return [
    "<available_skills>",
    "Skills hold instructions and resources for specialised tasks. When a task matches a skill's description,",
    "load it with the `skill` tool (pass its name) before you start, then follow it. Do not load skills that do",
    "not apply.",
    ...allowed.map((skill) => `- ${skill.name}: ${skill.description.replace(/\s+/g, " ")}`),
    "</available_skills>"
  ].join("\n")
}

/**
 * The skills plugin. Skills are discovered once, when the plugin loads: the project's folders only in a trusted
 * project, the person's own folders always; a skill added later is seen after a restart.
 */
export const skillsPlugin: Plugin = definePlugin({
  name: "@lathe/skills",
  setup: async (ctx) => {
    const skills = await discoverSkills(ctx)
    return {
      tools: [createSkillTool(skills)],
      "system.transform": (input, output) => {
        const block = skillsBlock(skills, input.permission)
        if (block) output.system.push(block)
      }
    }
  }
})

export default skillsPlugin
