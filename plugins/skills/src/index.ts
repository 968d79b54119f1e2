/**
 * @lathe/skills: finds `SKILL.md` files in the project's and the person's skill folders, lists them (name and
 * description) in the system prompt, and contributes the `skill` tool that loads one on demand.
 * `@lathe/skills/plugin` is the same plugin without this entry's `SKILL.md` parser loaded up front.
 *
 * ```json
 * { "plugin": ["@lathe/skills"], "permission": { "skill": { "*": "allow", "internal-*": "deny" } } }
 * ```
 */
export {
  type DiscoverOptions,
  discoverSkills,
  type Skill,
  type SkillRoot,
  type SkillScope,
  skillRoots
} from "./discover.js"
export { skillsBlock, skillsPlugin, skillsPlugin as default } from "./plugin.js"
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
