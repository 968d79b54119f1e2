import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { loadBashParser } from "../src/bash.js"
import { checksOf } from "../src/checks.js"
import { realPath } from "../src/real-path.js"
import { tempRoot } from "./helpers.js"

// Every bash write route, resolved against the command's cwd and through symlinks, on real folders.
const root = tempRoot()
const outside = tempRoot()
const home = tempRoot()
const sibling = `${root}-sibling`
mkdirSync(join(root, "sub"))
mkdirSync(join(root, "nested", "deep"), { recursive: true })
writeFileSync(join(root, "a.txt"), "a\n")
writeFileSync(join(outside, "target.txt"), "t\n")
symlinkSync(outside, join(root, "link-out"))
symlinkSync(join(outside, "target.txt"), join(root, "file-link"))
symlinkSync(join(outside, "new.txt"), join(root, "dangling"))
symlinkSync("../link-out", join(root, "sub", "relative-link"))
symlinkSync(join(root, "sub"), join(root, "link-in"))
const up = dirname(root)

/** The external_directory patterns a bash line asks for. */
const external = async (line: string, workdir?: string): Promise<Array<string>> => {
  const parser = await loadBashParser()
  const checks = checksOf(
    { sessionID: "s", permission: "bash", patterns: [line], ruleset: [], metadata: workdir ? { workdir } : {} },
    { root, directory: root, home },
    parser
  )
  return checks.filter((check) => check.permission === "external_directory").map((check) => check.pattern)
}

const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["echo x > link-out/a.txt", [`${outside}/a.txt`]],
  ["echo x >> file-link", [`${outside}/target.txt`]],
  ["echo x > dangling", [`${outside}/new.txt`]],
  ["touch link-out/../escaped", [`${dirname(outside)}/escaped`]],
  ["cp a.txt link-out/", [outside]],
  ["mv a.txt -t link-out", [outside]],
  ["mv --target-directory=link-out a.txt", [outside]],
  ["ln -s x link-out/l", [`${outside}/l`]],
  ["cd link-out && touch b", [`${outside}/b`]],
  // The parser attaches `> f` to the whole list, so it is counted from the cwd before and after the cd.
  ["cd sub && echo x > ../../x", [`${up}/x`, `${dirname(up).replace(/\/$/, "")}/x`]],
  ["cd sub && echo x > ../x", [`${up}/x`]],
  ["echo x > sub/inside.txt", []],
  ["cd sub && touch ../a.txt", []],
  ["tee -a link-out/t.txt < a.txt", [`${outside}/t.txt`]],
  ["dd if=/dev/zero of=link-out/d bs=1 count=1", [`${outside}/d`]],
  ["sed -i s/a/b/ file-link", [`${outside}/target.txt`]],
  ["sed -i.bak -e s/a/b/ a.txt file-link", [`${outside}/target.txt`]],
  ["chmod 600 file-link", [`${outside}/target.txt`]],
  ["chown me:me sub/x file-link", [`${outside}/target.txt`]],
  ["rm -rf link-out/*", [outside, `${outside}/target.txt`]],
  [`mkdir -p ${sibling}/x`, [`${sibling}/x`]],
  ["truncate -s 0 link-out/x", [`${outside}/x`]],
  ["rsync -a a.txt link-out/", [outside]],
  ["install a.txt link-out/i", [`${outside}/i`]],
  ["echo x &> link-out/log", [`${outside}/log`]],
  ["echo x >| link-out/c", [`${outside}/c`]],
  ["touch {a,link-out/b}", [`${outside}/b`]],
  ["find link-out -delete", [outside]],
  ["env -C link-out touch e", [`${outside}/e`]],
  ["cat a.txt > sub/../link-out/z", [`${outside}/z`]],
  [`echo x > "link-out"/q`, [`${outside}/q`]],
  ["cd sub; cd ..; touch ok", []],
  ["echo x > ~/h", [`${home}/h`]],
  ["touch sub/relative-link/r", [`${outside}/r`]],
  ["touch link-in/fine", []],
  ["rmdir link-out/gone", [`${outside}/gone`]],
  ["mkdir nested/deep/../../new", []],
  ["cp -t link-out a.txt", [outside]],
  ["unlink link-out/target.txt", [`${outside}/target.txt`]]
]

describe("bash write routes", () => {
  it("covers at least 20 write routes", () => {
    assert.isAtLeast(cases.length, 20)
  })

  for (const [line, expected] of cases) {
    it(JSON.stringify(line), async () => {
      assert.deepStrictEqual((await external(line)).sort(), [...expected].sort())
    })
  }

  it("a workdir that is a symlink out of the project puts relative writes outside", async () => {
    assert.deepStrictEqual(await external("touch w", join(root, "link-out")), [`${outside}/w`])
    assert.deepStrictEqual(await external("touch w", join(root, "link-in")), [])
  })

  it("a write after a cd that cannot be followed is unknown, never assumed inside", async () => {
    assert.deepStrictEqual(await external("cd $D && touch x"), ["x"])
    assert.deepStrictEqual(await external("rm -rf $DIR"), ["$DIR"])
  })

  it("realPath resolves symlinks before .., as the kernel does", () => {
    assert.strictEqual(realPath(`${root}/link-out/../x`), `${dirname(outside)}/x`)
    assert.strictEqual(realPath(`${root}/missing/../x`), join(root, "x"))
  })
})
