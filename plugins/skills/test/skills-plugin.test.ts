import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { pluginContext, runPluginTurn } from "@lathe/plugin/testing"
import skills from "../src/index.js"
import { skillText, tempDir, write, writeSkill } from "./helpers.js"

const stepInput = { sessionID: "s", agent: "build", model: { providerID: "p", modelID: "m" }, permission: [] }

/** A project with three skills (two of them `secret-*`), a global one, and temp config and home dirs. */
const fixture = () => {
  const root = tempDir()
  const paths = { config: tempDir(), home: tempDir(), data: tempDir() }
  write(root, {
    ".lathe/skills/release-notes/SKILL.md": skillText(
      ["name: release-notes", "description: Write release notes from the changesets."],
      "Read .changeset/*.md and group the entries by package."
    ),
    ".lathe/skills/release-notes/template.md": "## {version}\n"
  })
  writeSkill(root, ".claude/skills", "secret-keys", "Rotate the production keys.", "SECRET BODY")
  writeSkill(root, ".claude/skills", "secret-db", "Open the production database.")
  writeSkill(paths.home, ".claude/skills", "commit-style", "How commit messages are written here.")
  return { root, paths }
}

/** The skills block the model received in a system prompt. */
const block = (system: ReadonlyArray<string> | undefined) => system?.find((s) => s.startsWith("<available_skills>"))

describe("@lathe/skills through the loop", () => {
  it("lists only the skills the agent's ruleset lets it load, and the skill tool loads one", async () => {
    const { root, paths } = fixture()
    const turn = await runPluginTurn({
      root,
      home: paths.home,
      configDir: paths.config,
      plugins: [skills],
      config: { permission: { skill: { "secret-*": "deny" } } },
      prompt: "write the release notes",
      steps: [
        { steps: [{ tool: "skill", id: "call_1", input: { name: "release-notes" } }] },
        { steps: [{ text: "done" }] }
      ]
    })
    const first = turn.requests[0]
    assert.strictEqual(
      block(first?.system),
      [
        "<available_skills>",
        "Skills hold instructions and resources for specialised tasks. When a task matches a skill's description,",
        "load it with the `skill` tool (pass its name) before you start, then follow it. Do not load skills that do",
        "not apply.",
        "- commit-style: How commit messages are written here.",
        "- release-notes: Write release notes from the changesets.",
        "</available_skills>"
      ].join("\n")
    )
    const system = JSON.stringify(first?.system)
    assert.notInclude(system, "secret-")
    assert.notInclude(system, "group the entries by package")
    assert.include(first?.tools ?? [], "skill")
    const loaded = turn.toolResults[0]?.output ?? ""
    assert.include(loaded, "group the entries by package")
    assert.include(loaded, `Skill folder: ${join(root, ".lathe/skills/release-notes")}`)
    assert.include(loaded, "- template.md")
  })

  /** The skills block the plugin adds to a system prompt, set up as the host would for a project (un)trusted. */
  const blockFor = async (
    root: string,
    paths: { readonly home: string; readonly config: string },
    trusted: boolean
  ) => {
    const hooks = await skills.setup(pluginContext(root, { home: paths.home, configDir: paths.config, trusted }))
    const output = { system: [] as Array<string> }
    await hooks["system.transform"]?.(stepInput, output)
    return block(output.system)
  }

  it("reads the project's skills only once the person trusts the project", async () => {
    const { root, paths } = fixture()
    const untrusted = await blockFor(root, paths, false)
    assert.include(untrusted, "- commit-style:")
    assert.notInclude(untrusted, "release-notes")
    const trusted = await blockFor(root, paths, true)
    assert.include(trusted, "- commit-style:")
    assert.include(trusted, "- release-notes:")
    assert.include(trusted, "- secret-keys:")
  })
})
