import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { discoverSkills } from "../src/index.js"
import { layout, writeSkill } from "./helpers.js"

describe("setup-rules: .agents/skills", () => {
  it("finds skills in the project's .agents/skills and in ~/.agents/skills", async () => {
    const options = layout()
    writeSkill(options.root, ".agents/skills", "deploy", "Project deploy.")
    writeSkill(options.home, ".agents/skills", "notes", "My notes.")
    const skills = await discoverSkills(options)
    assert.deepStrictEqual(
      skills.map((skill) => [skill.name, skill.scope, skill.path]),
      [
        ["deploy", "project", join(options.root, ".agents/skills/deploy/SKILL.md")],
        ["notes", "global", join(options.home, ".agents/skills/notes/SKILL.md")]
      ]
    )
  })

  it("ranks the project's .agents/skills after .lathe/skills and before .claude/skills", async () => {
    const options = layout()
    writeSkill(options.root, ".agents/skills", "review", "from .agents")
    writeSkill(options.root, ".claude/skills", "review", "from .claude")
    const [skill] = await discoverSkills(options)
    assert.strictEqual(skill?.description, "from .agents")
    writeSkill(options.root, ".lathe/skills", "review", "from .lathe")
    const [winner] = await discoverSkills(options)
    assert.strictEqual(winner?.description, "from .lathe")
  })

  it("ranks ~/.agents/skills after the config dir and before ~/.claude/skills", async () => {
    const options = layout()
    writeSkill(options.home, ".agents/skills", "review", "from ~/.agents")
    writeSkill(options.home, ".claude/skills", "review", "from ~/.claude")
    const [skill] = await discoverSkills(options)
    assert.strictEqual(skill?.description, "from ~/.agents")
    writeSkill(options.configDir, "skills", "review", "from the config dir")
    const [winner] = await discoverSkills(options)
    assert.strictEqual(winner?.description, "from the config dir")
  })

  it("skips the project's .agents/skills in an untrusted project but keeps ~/.agents/skills", async () => {
    const options = layout(false)
    writeSkill(options.root, ".agents/skills", "project-skill")
    writeSkill(options.home, ".agents/skills", "mine")
    const skills = await discoverSkills(options)
    assert.deepStrictEqual(
      skills.map((skill) => skill.name),
      ["mine"]
    )
    assert.deepStrictEqual(options.log.at("warn"), [
      `Ignored the project's skills in ${join(options.root, ".agents/skills")}: this project is not trusted. ` +
        `Run \`lathe trust\` in ${options.root} to load them.`
    ])
  })
})
