import { execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// Snapshots learn what changed from a watch on the work tree's folders (Linux): what a person changes between two
// steps must be seen there, and stay when the steps are undone.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe.runIf(process.platform === "linux")("lathe undo after a person edited files during the turn", () => {
  it("undoes the turn's edits and keeps the person's, and the snapshots never scanned the whole tree for them", async () => {
    const box = sandbox()
    const at = (file: string) => join(box.project, file)
    writeFileSync(at("a.txt"), "v0\n")
    writeFileSync(at("notes.md"), "the person's notes\n")
    mkdirSync(at("src"))
    writeFileSync(at("src/main.ts"), "export const main = 1\n")
    // git from PATH, each call written down.
    const bin = join(box.dir, "bin")
    mkdirSync(bin)
    const calls = join(box.dir, "git-calls")
    writeFileSync(join(bin, "git"), `#!/bin/sh\necho "$(date +%s%3N) $*" >> '${calls}'\nexec /usr/bin/git "$@"\n`)
    chmodSync(join(bin, "git"), 0o755)

    const edits = 6
    let personAt = Number.POSITIVE_INFINITY
    server = await startScriptedServer((_request, index): ScriptedReply | undefined => {
      if (index > edits) return undefined
      if (index === edits) return { steps: [{ text: "Done." }] }
      // While the model "thinks" before its fourth answer, the person saves two files in their editor.
      if (index === 3)
        setTimeout(() => {
          personAt = Date.now()
          writeFileSync(at("notes.md"), "the person's notes, edited during the turn\n")
          writeFileSync(at("src/main.ts"), "export const main = 2 // the person's change\n")
        }, 150)
      return {
        steps: [{ tool: "edit", input: { filePath: "a.txt", oldString: `v${index}`, newString: `v${index + 1}` } }],
        firstByteMs: index === 3 ? 400 : 60
      }
    })
    const env = { ...box.env, PATH: `${bin}:${box.env.PATH}`, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const run = await runLathe(["run", "--format", "json", "--yes", "bump a.txt six times"], { cwd: box.project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(readFileSync(at("a.txt"), "utf8"), `v${edits}\n`)
    // The watch saw the person's files: no snapshot after they saved them scanned the whole tree (those of files the
    // last tree has are written without git at all).
    const log = readFileSync(calls, "utf8").split("\n").filter(Boolean)
    const since = log.filter((line) => Number(line.split(" ")[0]) >= personAt)
    const scans = since.filter((line) => line.includes(" ls-files -z -t ") && !line.includes(":(top,literal)"))
    assert.isAbove(since.length, 0, "git ran after the person's save (the steps' line counts)")
    assert.deepStrictEqual(scans, [])
    // And yet the last step's tree (the second of the last `diff-tree`) holds the person's files as they saved them.
    const shadow = /init --quiet --bare (\S+)/.exec(log.join("\n"))?.[1] as string
    const last = since
      .filter((line) => line.includes(" diff-tree "))
      .at(-1)
      ?.split(" ")
      .at(-1) as string
    const shown = (file: string) =>
      execFileSync("git", ["--git-dir", shadow, "show", `${last}:${file}`], { encoding: "utf8" })
    assert.strictEqual(shown("notes.md"), "the person's notes, edited during the turn\n")
    assert.strictEqual(shown("src/main.ts"), "export const main = 2 // the person's change\n")
    // No step's patch names the person's files.
    const patched = run.events.flatMap((e) =>
      e.type === "part.updated" && e.part.type === "patch" ? [...e.part.files] : []
    )
    assert.deepStrictEqual([...new Set(patched)], ["a.txt"])

    const undo = await runLathe(["undo"], { cwd: box.project, env })
    assert.strictEqual(undo.code, 0, undo.stderr)
    assert.strictEqual(readFileSync(at("a.txt"), "utf8"), "v0\n")
    assert.strictEqual(readFileSync(at("notes.md"), "utf8"), "the person's notes, edited during the turn\n")
    assert.strictEqual(readFileSync(at("src/main.ts"), "utf8"), "export const main = 2 // the person's change\n")
  })
})
