import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"

/**
 * Puts a `git` first on this process's PATH that runs `script` (sh) before `git <command>` and is the real git
 * otherwise, as in a repository whose status hangs or fails. Returns the function that puts PATH back.
 */
export const fakeGit = (command: string, script: string): (() => void) => {
  const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim()
  const bin = mkdtempSync(join(tmpdir(), "lathe-fake-git-"))
  writeFileSync(
    join(bin, "git"),
    `#!/bin/sh\ncase " $* " in *" ${command} "*) ${script} ;; esac\nexec '${real}' "$@"\n`,
    {
      mode: 0o755
    }
  )
  const path = process.env.PATH
  process.env.PATH = `${bin}${delimiter}${path ?? ""}`
  return () => {
    process.env.PATH = path
  }
}
