import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

/** A fresh temp dir. */
export const tempDir = (): string => mkdtempSync(join(tmpdir(), "lathe-git-context-"))

/** Runs real git in `cwd` with a fixed identity, returning its trimmed stdout. */
export const git = (cwd: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"]
  }).trim()

/** Writes files (paths relative to `root`). */
export const write = (root: string, files: Readonly<Record<string, string>>): void => {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
}

/** A repository on branch `main` with one commit of `README.md`. */
export const repo = (): string => {
  const root = tempDir()
  git(root, "init", "-q", "-b", "main")
  write(root, { "README.md": "hello\n" })
  git(root, "add", ".")
  git(root, "commit", "-q", "-m", "init")
  return root
}

/**
 * A clone of a repository whose `main` is 2 commits ahead of `origin/main` and 1 behind it, with a modified,
 * a staged and an untracked file.
 */
export const trackingRepo = (): string => {
  const origin = repo()
  const root = join(tempDir(), "clone")
  git(dirname(root), "clone", "-q", origin, root)
  write(origin, { "upstream.txt": "1\n" })
  git(origin, "add", ".")
  git(origin, "commit", "-q", "-m", "upstream")
  git(root, "fetch", "-q")
  for (const n of [1, 2]) {
    write(root, { [`local${n}.txt`]: `${n}\n` })
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", `local ${n}`)
  }
  write(root, { "README.md": "changed\n", "src/new file.ts": "export {}\n", "staged.txt": "s\n" })
  git(root, "add", "staged.txt")
  return root
}
