import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { createSession, type PathsShape, SessionPrompt, trustProject } from "@lathe/core"
import { Bus, Config, chunks, Paths, Plugins, ScriptedLLM, SessionStore, testLoopLayer } from "@lathe/core/testing"
import { Effect, Layer } from "effect"
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
  it.live("lists only the skills the agent's ruleset lets it load, and the skill tool loads one", () => {
    const { root, paths } = fixture()
    return Effect.gen(function* () {
      const session = yield* createSession({ title: "test" })
      yield* (yield* SessionPrompt).prompt({
        sessionID: session.id,
        parts: [{ type: "text", text: "write the release notes" }],
        title: false
      })
      const [first, second] = yield* (yield* ScriptedLLM).requests
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
      assert.property(first?.tools ?? {}, "skill")
      const sent = JSON.stringify(second?.messages)
      assert.include(sent, "group the entries by package")
      assert.include(sent, `Skill folder: ${join(root, ".lathe/skills/release-notes")}`)
      assert.include(sent, "- template.md")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root,
          paths,
          plugins: [skills],
          config: { permission: { skill: { "secret-*": "deny" } } },
          steps: [
            [
              chunks.toolCall("call_1", "skill", { name: "release-notes" }),
              chunks.finish({ input: 1, output: 1 }, "tool-calls")
            ],
            [chunks.text("done"), chunks.finish({ input: 1, output: 1 })]
          ]
        })
      )
    )
  })

  /** The skills block of a host loading the plugin with the real file-based Config (untrusted until trusted). */
  const hostBlock = (root: string, overrides: Partial<PathsShape>) =>
    Effect.gen(function* () {
      const output = yield* (yield* Plugins).trigger("system.transform", stepInput, { system: [] })
      return block(output.system)
    }).pipe(
      Effect.provide(
        Plugins.layer([skills]).pipe(
          Layer.provideMerge(
            Layer.mergeAll(Config.layerWith({}), Bus.layer, SessionStore.memory).pipe(
              Layer.provideMerge(Paths.layerTest(root, overrides))
            )
          )
        )
      )
    )

  it.live("reads the project's skills only once the person trusts the project", () => {
    const { root, paths } = fixture()
    return Effect.gen(function* () {
      const untrusted = yield* hostBlock(root, paths)
      assert.include(untrusted, "- commit-style:")
      assert.notInclude(untrusted, "release-notes")
      yield* Effect.gen(function* () {
        yield* trustProject(yield* Paths)
      }).pipe(Effect.provide(Paths.layerTest(root, paths)))
      const trusted = yield* hostBlock(root, paths)
      assert.include(trusted, "- commit-style:")
      assert.include(trusted, "- release-notes:")
      assert.include(trusted, "- secret-keys:")
    })
  })
})
