import { lstat, rm, rmdir } from "node:fs/promises"
import { dirname, isAbsolute, join } from "node:path"
import { SnapshotError } from "@lathe/core"
import { Effect } from "effect"
import { git, splitNul } from "./git.js"
import type { Shadow } from "./shadow-repo.js"

/**
 * Rejects paths that could reach outside the project: absolute, `..` segments, empty segments, `.git`.
 * Patches normally come from `patch`, but revert also takes whatever a session store held.
 */
export const checkPaths = (operation: string, paths: ReadonlyArray<string>) => {
  const bad = paths.find(
    (p) =>
      p === "" ||
      isAbsolute(p) ||
      p.includes("\\") ||
      p.includes("\0") ||
      p.split("/").some((s) => s === "" || s === "." || s === ".." || s.toLowerCase() === ".git")
  )
  return bad === undefined
    ? Effect.void
    : Effect.fail(
        new SnapshotError({
          operation,
          message: `Refusing to ${operation} "${bad}": patch paths must be relative to the project root, use "/" and stay inside it.`
        })
      )
}

/** True when every directory above `path` (inside `root`) is a real directory, not a symlink or a file. */
const realParents = async (root: string, path: string): Promise<boolean> => {
  const parts = path.split("/").slice(0, -1)
  for (let i = 1; i <= parts.length; i++) {
    const info = await lstat(join(root, ...parts.slice(0, i))).catch(() => undefined)
    if (!info || info.isSymbolicLink() || !info.isDirectory()) return false
  }
  return true
}

/**
 * Deletes a work-tree file (or symlink, never its target) without following symlinked parents out of the
 * project, then removes the folders it leaves empty, up to the root. Directories are never removed whole.
 */
const removeFile = (root: string, path: string) =>
  Effect.promise(async () => {
    if (!(await realParents(root, path))) return
    const info = await lstat(join(root, path)).catch(() => undefined)
    if (!info || info.isDirectory()) return
    await rm(join(root, path), { force: true })
    for (let dir = dirname(path); dir !== "." && dir !== ""; dir = dirname(dir)) {
      const removed = await rmdir(join(root, dir)).then(
        () => true,
        () => false
      )
      if (!removed) break
    }
  })

/**
 * Makes each of `paths` in the work tree as it is in tree `hash`: written from the snapshot (content, mode and
 * symlinks, through a throwaway index so the shadow index keeps its stat cache) when the tree has it, deleted
 * when it does not. Paths not listed are untouched. Needs the snapshot lock.
 */
export const applyFiles = Effect.fn("SnapshotGit.applyFiles")(function* (
  shadow: Shadow,
  operation: string,
  hash: string,
  paths: ReadonlyArray<string>
) {
  if (paths.length === 0) return
  const env = { GIT_INDEX_FILE: join(shadow.gitDir, "lathe-checkout.index") }
  yield* Effect.ensuring(
    Effect.gen(function* () {
      yield* git(shadow.target, operation, { args: ["read-tree", hash], env, timeout: "5 minutes" })
      const present = new Set(splitNul(yield* git(shadow.target, operation, { args: ["ls-files", "-z"], env })))
      const wanted = [...new Set(paths)]
      for (const path of wanted.filter((p) => !present.has(p))) yield* removeFile(shadow.root, path)
      const restore = wanted.filter((p) => present.has(p))
      if (restore.length > 0)
        yield* git(shadow.target, operation, {
          args: ["checkout-index", "--force", "-z", "--stdin"],
          input: restore.map((p) => `${p}\0`).join(""),
          env,
          timeout: "10 minutes"
        })
    }),
    Effect.promise(() => rm(env.GIT_INDEX_FILE, { force: true }))
  )
})
