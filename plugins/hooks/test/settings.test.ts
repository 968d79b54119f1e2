import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { loadHooks } from "../src/settings.js"
import { on, tempDir, writeJson } from "./helpers.js"

describe("loadHooks", () => {
  it("reads the person's settings, Lathe's config and a trusted project's files, in that order", () => {
    const home = tempDir()
    const root = tempDir()
    writeJson(join(home, ".claude", "settings.json"), { hooks: { PreToolUse: on("Bash", "echo home") } })
    writeJson(join(root, ".claude", "settings.json"), { hooks: { Stop: on(undefined, "echo project") } })
    writeJson(join(root, ".claude", "settings.local.json"), {
      permissions: { allow: [] },
      hooks: { PostToolUse: on("Edit", { command: "echo local", timeout: 5 }) }
    })
    const loaded = loadHooks({
      home,
      root,
      trusted: true,
      config: { hooks: { SessionStart: on("startup", "echo config") }, source: "lathe.json" }
    })
    assert.deepStrictEqual(
      loaded.groups.map((group) => [group.event, group.commands.map((c) => [c.command, c.timeoutSeconds, c.source])]),
      [
        ["PreToolUse", [["echo home", 60, join(home, ".claude", "settings.json")]]],
        ["SessionStart", [["echo config", 60, "lathe.json"]]],
        ["Stop", [["echo project", 60, join(root, ".claude", "settings.json")]]],
        ["PostToolUse", [["echo local", 5, join(root, ".claude", "settings.local.json")]]]
      ]
    )
    assert.deepStrictEqual(loaded.problems, [])
  })

  it("names what it cannot run: an unknown event, a bad matcher, another hook type, a file that is not JSON", () => {
    const home = tempDir()
    const root = tempDir()
    const file = join(home, ".claude", "settings.json")
    writeJson(file, {
      hooks: {
        PreCompact: on(undefined, "echo compact"),
        PreToolUse: [
          { matcher: "Edit(", hooks: [{ type: "command", command: "echo bad" }] },
          { matcher: "Bash", hooks: [{ type: "http", url: "http://127.0.0.1:1" }] }
        ]
      }
    })
    writeJson(join(root, ".claude", "settings.json"), {})
    writeFileSync(join(root, ".claude", "settings.local.json"), "{ not json")
    const loaded = loadHooks({ home, root, trusted: true })
    assert.deepStrictEqual(loaded.groups, [])
    assert.lengthOf(loaded.problems, 4)
    assert.include(loaded.problems[0], `The PreCompact hooks in ${file} do not run`)
    assert.include(loaded.problems[1], `its matcher "Edit(" `)
    assert.include(loaded.problems[2], 'only "type": "command" hooks')
    assert.include(loaded.problems[3], "settings.local.json were skipped: it is not valid JSON")
  })
})
