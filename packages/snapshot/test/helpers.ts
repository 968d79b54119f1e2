import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { Config, type ConfigTestInput, Paths, Snapshot } from "@lathe/core"
import { Effect, Layer, Logger } from "effect"
import { afterAll } from "vitest"
import { SnapshotGit, type SnapshotGitOptions } from "../src/index.js"

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** Runs git synchronously in a test (the code under test never does). */
export const sh = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    encoding: "utf8"
  }).trim()

/** A fresh temp folder: `root` (the project) beside `data` (Lathe's data dir) and `home`. */
export const tempProject = (kind: "git" | "plain") => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-snap-")))
  made.push(base)
  const root = join(base, "project")
  mkdirSync(root)
  if (kind === "git") sh(root, "init", "-q")
  return { base, root, data: join(base, "data"), home: join(base, "home") }
}

/** A git that writes each call's arguments, one line each, to `calls` before it runs (`base`: where both live). */
export const loggedGit = (base: string) => {
  const calls = join(base, "calls")
  const wrapper = join(base, "git")
  writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> '${calls}'\nexec git "$@"\n`)
  chmodSync(wrapper, 0o755)
  writeFileSync(calls, "")
  return { calls, wrapper }
}

/** Writes `text` to `path` under `root`, making its folders. */
export const write = (root: string, path: string, text: string) => {
  mkdirSync(join(root, path, ".."), { recursive: true })
  writeFileSync(join(root, path), text)
}

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex")

/** Where a project's shadow repository lives: one per work tree (`Paths.layerTest`'s project id is the root's hash). */
export const shadowDir = (project: { data: string; root: string; projectID?: string }) =>
  join(project.data, "snapshot", `${project.projectID ?? sha1(project.root)}.${sha1(project.root).slice(0, 16)}`)

/** The Snapshot layer for a temp project, plus the log lines it wrote. */
export const snapshotLayer = (
  project: { root: string; data: string; home: string; projectID?: string },
  config: ConfigTestInput = {},
  options: SnapshotGitOptions = {}
) => {
  const logs: Array<string> = []
  const capture = Logger.make(({ message }) => {
    logs.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
  const deps = Layer.mergeAll(
    Paths.layerTest(project.root, {
      data: project.data,
      home: project.home,
      config: join(project.home, ".config"),
      ...(project.projectID ? { projectID: project.projectID } : {})
    }),
    Config.layerTest(config)
  )
  const layer = SnapshotGit.layerWith(options).pipe(
    Layer.provide(deps),
    Layer.provideMerge(Logger.layer([capture]))
  ) as Layer.Layer<Snapshot>
  return { layer, logs }
}

/** Every file under `dir` (not descending into `.git` unless asked) with its content, or `-> target` for links. */
export const treeOf = (dir: string, options: { git?: boolean; skip?: ReadonlyArray<string> } = {}) => {
  const out: Record<string, string> = {}
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      const rel = relative(dir, path)
      if ((!options.git && entry.name === ".git") || options.skip?.includes(rel)) continue
      if (entry.isSymbolicLink()) out[rel] = `-> ${readlinkSync(path)}`
      else if (entry.isDirectory()) {
        out[`${rel}/`] = ""
        walk(path)
      } else out[rel] = createHash("sha1").update(readFileSync(path)).digest("hex")
    }
  }
  walk(dir)
  return out
}

/** A fingerprint of the user's `.git`: every file's bytes and mode, so any write, lock or refresh shows. */
export const gitFingerprint = (root: string) => {
  const files = treeOf(join(root, ".git"), { git: true })
  const index = statSync(join(root, ".git", "index"), { throwIfNoEntry: false })
  return JSON.stringify({ files, indexMtime: index?.mtimeMs ?? 0 })
}

/** The service, for `Effect.gen` bodies. */
export const snap = Effect.gen(function* () {
  return yield* Snapshot
})
