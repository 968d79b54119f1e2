import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { discoverSkills, type SkillRoot, skillRoots } from "../src/index.js"
import { layout, write, writeSkill } from "./helpers.js"

const PROJECT_DIRS = [".lathe/skills", ".agents/skills", ".claude/skills", ".opencode/skill", ".opencode/skills"]

describe("discoverSkills", () => {
  it("searches the project folders, then the config dir, then ~/.claude/skills", () => {
    const options = layout()
    const expected: ReadonlyArray<SkillRoot> = [
      ...PROJECT_DIRS.map((dir) => ({ directory: join(options.root, dir), scope: "project" as const })),
      { directory: join(options.configDir, "skills"), scope: "global" },
      { directory: join(options.home, ".agents", "skills"), scope: "global" },
      { directory: join(options.home, ".claude", "skills"), scope: "global" }
    ]
    assert.deepStrictEqual(skillRoots(options), expected)
  })

  it("finds skills in every folder, sorted by name, with absolute paths and scope", async () => {
    const options = layout()
    writeSkill(options.root, ".opencode/skills", "delta")
    writeSkill(options.root, ".lathe/skills", "charlie")
    writeSkill(options.configDir, "skills", "bravo")
    writeSkill(options.home, ".claude/skills", "alpha", "First.", "Alpha body.")
    const skills = await discoverSkills(options)
    assert.deepStrictEqual(
      skills.map((skill) => [skill.name, skill.scope, skill.directory]),
      [
        ["alpha", "global", join(options.home, ".claude/skills/alpha")],
        ["bravo", "global", join(options.configDir, "skills/bravo")],
        ["charlie", "project", join(options.root, ".lathe/skills/charlie")],
        ["delta", "project", join(options.root, ".opencode/skills/delta")]
      ]
    )
    assert.strictEqual(skills[0]?.path, join(options.home, ".claude/skills/alpha/SKILL.md"))
    assert.strictEqual(skills[0]?.body, "Alpha body.")
    assert.deepStrictEqual(options.log.lines, [])
  })

  it("lets each folder win over every later one, and says which copy is used", async () => {
    const all = [
      ...PROJECT_DIRS.map((dir) => ["root", dir] as const),
      ["configDir", "skills"] as const,
      ["home", ".agents/skills"] as const,
      ["home", ".claude/skills"] as const
    ]
    // Remove the winner one folder at a time: the next folder in precedence order must take over.
    for (const [index, [base, dir]] of all.entries()) {
      const options = layout()
      for (const [b, d] of all.slice(index)) writeSkill(options[b], d, "review", `from ${d}`)
      const [skill, ...rest] = await discoverSkills(options)
      assert.lengthOf(rest, 0)
      assert.strictEqual(skill?.description, `from ${dir}`)
      assert.strictEqual(skill?.path, join(options[base], dir, "review", "SKILL.md"))
      const shadowed = all.slice(index + 1)
      assert.deepStrictEqual(
        options.log.at("info"),
        shadowed.map(
          ([b, d]) =>
            `Skill "review" in ${join(options[b], d, "review", "SKILL.md")} is shadowed by ${skill?.path}, which is used.`
        )
      )
    }
  })

  it("reports an invalid skill with its path and problem and keeps the others", async () => {
    const options = layout()
    writeSkill(options.root, ".lathe/skills", "good")
    write(options.root, {
      ".lathe/skills/Bad_Name/SKILL.md": "---\nname: Bad_Name\ndescription: d\n---\n",
      ".claude/skills/other/SKILL.md": "---\nname: mismatch\ndescription: d\n---\n",
      ".claude/skills/notes/README.md": "a folder without SKILL.md is not a skill",
      ".claude/skills/stray.md": "a file beside the skill folders"
    })
    const skills = await discoverSkills(options)
    assert.deepStrictEqual(
      skills.map((skill) => skill.name),
      ["good"]
    )
    assert.deepStrictEqual(options.log.at("warn"), [
      `Skipped skill ${join(options.root, ".lathe/skills/Bad_Name/SKILL.md")}: the name "Bad_Name" is invalid: ` +
        "use only lowercase letters, digits and hyphens (no hyphen at the start or end, never two in a row).",
      `Skipped skill ${join(options.root, ".claude/skills/other/SKILL.md")}: ` +
        'the name "mismatch" must equal its folder name "other".'
    ])
  })

  it("skips the project's folders in an untrusted project with one warning saying how to trust it", async () => {
    const options = layout(false)
    writeSkill(options.root, ".lathe/skills", "project-one")
    writeSkill(options.root, ".claude/skills", "project-two")
    writeSkill(options.configDir, "skills", "mine")
    const skills = await discoverSkills(options)
    assert.deepStrictEqual(
      skills.map((skill) => skill.name),
      ["mine"]
    )
    assert.deepStrictEqual(options.log.at("warn"), [
      `Ignored the project's skills in ${join(options.root, ".lathe/skills")}, ${join(options.root, ".claude/skills")}: ` +
        `this project is not trusted. Run \`lathe trust\` in ${options.root} to load them.`
    ])
  })

  it("stays quiet in an untrusted project without skill folders, and finds nothing where nothing is", async () => {
    const options = layout(false)
    mkdirSync(join(options.root, "src"))
    assert.deepStrictEqual(await discoverSkills(options), [])
    assert.deepStrictEqual(options.log.lines, [])
  })
})
