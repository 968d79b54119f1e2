import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { loadBashParser } from "../src/bash.js"
import { type CheckContext, checksOf } from "../src/checks.js"
import { defaults } from "../src/ruleset.js"
import { decide, rules } from "./decide.js"
import { tempRoot } from "./helpers.js"

// "Walls that hold": a write through a path an earlier command of the same line creates (a link, a moved, copied or
// extracted file) was resolved before that path existed, so it looked inside the project and landed outside.
// Each case first runs under plain bash in a scratch project to show the file really lands outside, on a fresh
// copy of the scratch folder analysed first, exactly as Lathe sees it before the line runs.

/** A scratch project (with `a.txt` and `evil.tar` holding a link `x` to `out`) and a folder outside it. */
const scratch = () => {
  const root = tempRoot()
  const out = tempRoot()
  mkdirSync(join(out, "inner"))
  writeFileSync(join(out, "file.txt"), "victim\n")
  writeFileSync(join(root, "a.txt"), "a\n")
  const staging = tempRoot()
  symlinkSync(out, join(staging, "x"))
  spawnSync("tar", ["cf", join(root, "evil.tar"), "-C", staging, "x"])
  const context: CheckContext = { root, directory: root, home: tempRoot() }
  return { root, out, context }
}

const bash = (line: string, cwd: string) => spawnSync("bash", ["-c", line], { cwd, encoding: "utf8" })

/** The external_directory checks of a line that Lathe cannot place statically, with their reasons. */
const unknownWrites = async (line: string, context: CheckContext) => {
  const parser = await loadBashParser()
  return checksOf({ sessionID: "s", permission: "bash", patterns: [line], ruleset: [] }, context, parser).filter(
    (check) => check.permission === "external_directory" && check.unparsable !== undefined
  )
}

/** [line (OUT stands for the outside folder), the file it puts outside]. */
const dangerous: ReadonlyArray<readonly [string, string]> = [
  ["ln -s OUT x && echo data > x/job", "job"],
  ["ln -s OUT/file.txt f && echo data >> f", "file.txt"],
  ["ln OUT/file.txt h && echo data >> h", "file.txt"],
  ["mkdir d && ln -s OUT d/x && echo data > d/x/job", "job"],
  ["ln -s OUT x; cd x && echo data > job", "job"],
  ["ln -s OUT/inner x && echo data > x/../escaped", "escaped"],
  ["ln -s OUT l && mv l x && echo data > x/job", "job"],
  ["ln -s OUT l && cp -a l x && echo data > x/job", "job"],
  ["tar xf evil.tar && echo data > x/job", "job"],
  ["echo x | xargs ln -s OUT && echo data > x/job", "job"],
  ["f() { echo data > x/job; }; ln -s OUT x; f", "job"],
  ["for i in 1 2; do echo data 2>/dev/null > x/job; ln -sfn OUT x; done", "job"]
]

describe("writes through paths made earlier in the line", () => {
  it.each(dangerous)("%s: plain bash writes outside; Lathe counts the write as unknown", async (template, victim) => {
    const { root, out, context } = scratch()
    const line = template.replaceAll("OUT", out)
    const unknown = await unknownWrites(line, context)
    const parser = await loadBashParser()
    const asked = decide(parser, context, defaults(), line)
    const denying = rules({ "*": "allow", external_directory: { "*": "ask", "/etc/*": "deny" } })
    const person = decide(parser, context, denying, line)
    bash(line, root)
    assert.isTrue(existsSync(join(out, victim)), `plain bash did not write ${victim} outside`)
    if (victim === "file.txt")
      assert.include(spawnSync("cat", [join(out, victim)], { encoding: "utf8" }).stdout, "data")
    assert.isNotEmpty(unknown, "no unknown write")
    assert.isTrue(
      unknown.some((check) => /may create (or replace|links)/.test(check.unparsable ?? "")),
      JSON.stringify(unknown)
    )
    // An ask under the defaults, and one only a person may approve where deny rules exist.
    assert.strictEqual(asked, "ask")
    assert.strictEqual(person, "person")
  })

  it("names the path and the program in the reason", async () => {
    const { root, context } = scratch()
    const [check] = await unknownWrites("ln -s /etc/cron.d x && echo data > x/job", context)
    assert.strictEqual(check?.pattern, `${root}/x/job`)
    assert.strictEqual(
      check?.unparsable,
      `it goes through ${root}/x, which ln in the same line may create or replace (a link could point anywhere)`
    )
  })

  it.each([
    "mkdir -p out && echo data > out/f",
    "touch b.txt && echo data >> b.txt",
    "cp a.txt b.txt && echo data >> b.txt",
    "npm test 2>&1 | tee test.log",
    "git status && echo data > notes.txt",
    "ln -s a.txt l && echo data > other.txt",
    "cd sub 2>/dev/null; echo data > a.txt"
  ])("%s: nothing made earlier in the line can redirect the write, so it is decided as usual", async (line) => {
    const { context } = scratch()
    assert.deepStrictEqual(await unknownWrites(line, context), [])
    assert.strictEqual(decide(await loadBashParser(), context, defaults(), line), "allow")
  })
})
