/**
 * `@lathe/skills/plugin`: the skills plugin alone, the entry a host loads on every run. Unlike the package's main
 * entry it does not load the `SKILL.md` parser (and `yaml`) until a skill file is found.
 */
import { definePlugin, type Plugin, type Ruleset } from "@lathe/plugin"
import { discoverSkills, type Skill } from "./discover.js"
import { createSkillTool, mayLoad } from "./skill-tool.js"

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
