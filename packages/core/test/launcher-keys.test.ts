import { fstatSync, mkdtempSync, openSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { LAUNCHER_KEY_PATTERN, launcherKeys, takeLauncherKeys } from "../src/process/launcher-keys.js"

/** Whether `fd` is an open descriptor of this process. */
const isOpen = (fd: number): boolean => {
  try {
    fstatSync(fd)
    return true
  } catch {
    return false
  }
}

describe("launcher keys", () => {
  it("reads NAME=value lines from the descriptor, undoes the launcher's escapes, closes it, drops the variable", () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-launcher-keys-"))
    const file = join(dir, "keys")
    // As bin/lathe writes them: a backslash as `\\`, a newline as `\n`; other characters as they are.
    writeFileSync(
      file,
      [
        `LK_ONE_API_KEY=a "q" 'b' $HOME \`id\` x=y`,
        "LK_TWO_API_KEY=line1\\nline2 back\\\\slash \\\\n literal",
        "AWS_SESSION_TOKEN=",
        "PATH=/attacker/bin",
        "not a line",
        ""
      ].join("\n")
    )
    const fd = openSync(file, "r")
    const env: NodeJS.ProcessEnv = { LATHE_KEYS_FD: String(fd), OTHER: "kept" }
    takeLauncherKeys(env)
    const keys = launcherKeys()
    assert.strictEqual(keys.LK_ONE_API_KEY, `a "q" 'b' $HOME \`id\` x=y`)
    assert.strictEqual(keys.LK_TWO_API_KEY, "line1\nline2 back\\slash \\n literal")
    assert.strictEqual(keys.AWS_SESSION_TOKEN, "")
    assert.isUndefined(keys.PATH, "only the launcher's names are taken")
    assert.deepStrictEqual(env, { OTHER: "kept" })
    assert.isFalse(isOpen(fd), "the descriptor is closed, so no child inherits it")
  })

  it("leaves a descriptor that is not a pipe or a file alone, and does nothing when none is open", () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-launcher-keys-"))
    const fd = openSync(dir, "r")
    const env: NodeJS.ProcessEnv = { LATHE_KEYS_FD: String(fd) }
    takeLauncherKeys(env)
    assert.isTrue(isOpen(fd), "not one of the launcher's: never closed")
    assert.deepStrictEqual(env, {})
    const closed: NodeJS.ProcessEnv = { LATHE_KEYS_FD: "987" }
    takeLauncherKeys(closed)
    assert.deepStrictEqual(closed, {})
    takeLauncherKeys({ LATHE_KEYS_FD: "1" })
    takeLauncherKeys({})
  })

  it("shares the keys with every copy of the module in the process (lathe run's own build carries one)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-launcher-keys-"))
    const file = join(dir, "keys")
    writeFileSync(file, "LK_COPY_API_KEY=shared\n")
    takeLauncherKeys({ LATHE_KEYS_FD: String(openSync(file, "r")) })
    // A query makes the loader evaluate the file again as a separate module, as a second bundle would.
    const copy: typeof import("../src/process/launcher-keys.js") = await import(
      /* @vite-ignore */ `../src/process/launcher-keys.ts?copy=${Date.now()}`
    )
    assert.notStrictEqual(copy.launcherKeys, launcherKeys, "a separate evaluation of the module")
    assert.strictEqual(copy.launcherKeys().LK_COPY_API_KEY, "shared")
  })

  it("names what the launcher hands over", () => {
    for (const name of ["OPENAI_API_KEY", "_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK"])
      assert.match(name, LAUNCHER_KEY_PATTERN)
    for (const name of ["API_KEY", "OPENAI_API_KEY_FILE", "AWS_ACCESS_KEY_ID", "PATH"])
      assert.notMatch(name, LAUNCHER_KEY_PATTERN)
  })
})
