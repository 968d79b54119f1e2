import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type PermissionRequest, rejected, type ToolRunContext } from "@lathe/plugin"
import { Effect, Exit } from "effect"
import { createSkillTool, discoverSkills } from "../src/index.js"
import { layout, skillText, write } from "./helpers.js"

/** A tool context whose asks are recorded and answered by `answer` (allow unless it throws). */
const toolContext = (root: string, answer: (request: PermissionRequest) => void = () => {}) => {
  const asks: Array<PermissionRequest> = []
  const ctx: ToolRunContext = {
    sessionID: "ses_1",
    messageID: "msg_1",
    callID: "call_1",
    agent: "build",
    directory: root,
    root,
    abort: new AbortController().signal,
    ask: async (request) => {
      asks.push(request)
      answer(request)
    },
    metadata: () => {}
  }
  return { ctx, asks }
}

/** A project with a `pdf-tools` skill holding a script and a reference beside its SKILL.md. */
const project = async () => {
  const options = layout()
  write(options.root, {
    ".lathe/skills/pdf-tools/SKILL.md": skillText(
      ["name: pdf-tools", "description: Fill PDF forms.", "allowed-tools: read bash"],
      "# Filling forms\n\nRun scripts/fill.py on the form."
    ),
    ".lathe/skills/pdf-tools/scripts/fill.py": "print('fill')\n",
    ".lathe/skills/pdf-tools/reference.md": "# Reference\n"
  })
  write(options.configDir, { "skills/commit-style/SKILL.md": skillText(["name: commit-style", "description: d"]) })
  const tool = createSkillTool(await discoverSkills(options))
  return { tool, root: options.root, directory: join(options.root, ".lathe/skills/pdf-tools") }
}

describe("the skill tool", () => {
  it.effect("asks the skill permission for the name, then returns the body, the folder and its other files", () =>
    Effect.gen(function* () {
      const { tool, root, directory } = yield* Effect.promise(project)
      assert.strictEqual(tool.id, "skill")
      assert.isFalse(tool.mutates)
      // The model keeps following a loaded skill: its output is never pruned.
      assert.isFalse(tool.prunable)
      const { ctx, asks } = toolContext(root)
      const result = yield* tool.run({ name: "pdf-tools" }, ctx)
      assert.deepStrictEqual(asks, [
        {
          permission: "skill",
          patterns: ["pdf-tools"],
          always: ["pdf-tools"],
          metadata: { path: join(directory, "SKILL.md") }
        }
      ])
      assert.strictEqual(result.title, "Loaded skill pdf-tools")
      assert.strictEqual(
        result.output,
        [
          '<skill name="pdf-tools">',
          "# Filling forms",
          "",
          "Run scripts/fill.py on the form.",
          "</skill>",
          "",
          `Skill folder: ${directory}`,
          "Paths in the instructions are relative to this folder; read other files only when they are needed.",
          "Other files in the folder:",
          "- reference.md",
          "- scripts/fill.py"
        ].join("\n")
      )
      assert.deepStrictEqual(result.metadata, {
        name: "pdf-tools",
        directory,
        files: ["reference.md", "scripts/fill.py"],
        allowedTools: ["read", "bash"],
        truncated: false
      })
    })
  )

  it.effect("fails with the person's rejection and reveals nothing of the skill", () =>
    Effect.gen(function* () {
      const { tool, root } = yield* Effect.promise(project)
      const { ctx, asks } = toolContext(root, (request) => {
        throw rejected(request.permission, request.patterns, "not now")
      })
      const exit = yield* Effect.exit(tool.run({ name: "pdf-tools" }, ctx))
      assert.lengthOf(asks, 1)
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
        assert.strictEqual(error?._tag === "Fail" ? error.error._tag : undefined, "PermissionRejected")
        assert.notInclude(JSON.stringify(error), "Filling forms")
      }
    })
  )

  it.effect("refuses an unknown name with the list of available skills, without asking", () =>
    Effect.gen(function* () {
      const { tool, root } = yield* Effect.promise(project)
      const { ctx, asks } = toolContext(root)
      const error = yield* Effect.flip(tool.run({ name: "pdf" }, ctx))
      assert.strictEqual(error.message, 'There is no skill named "pdf". Available skills: commit-style, pdf-tools.')
      assert.lengthOf(asks, 0)
      const none = createSkillTool([])
      const empty = yield* Effect.flip(none.run({ name: "pdf" }, ctx))
      assert.strictEqual(empty.message, 'There is no skill named "pdf": no skills are installed.')
      const invalid = yield* Effect.flip(tool.run({}, ctx))
      assert.strictEqual(invalid._tag, "ToolInvalidArguments")
    })
  )
})
