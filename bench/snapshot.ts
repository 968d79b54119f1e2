/**
 * Snapshot benchmark: a generated tree of 50,000 small files in nested folders, timed against raw git plumbing
 * (`git add -A && git write-tree` into a fresh bare repository) on the same tree in the same run.
 *
 *   npx tsx --conditions=@lathe/source bench/snapshot.ts [files=50000]
 *
 * Cases: first track() of a plain folder (every file hashed), first track() of a git repository (seeded from
 * its index and object store), track() after one file changed, and patch() after one file changed.
 * Each is the best of two runs; the temp tree is removed at the end, whatever happens.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Config, Paths, Snapshot } from "@lathe/core"
import { SnapshotGit } from "@lathe/snapshot"
import { Effect, Layer, ManagedRuntime } from "effect"

const run = promisify(execFile)
const files = Number(process.argv[2] ?? 50_000)
const git = (cwd: string, ...args: Array<string>) =>
  run("git", ["-c", "user.name=b", "-c", "user.email=b@b", "-c", "gc.auto=0", ...args], { cwd, maxBuffer: 1 << 28 })

const time = async (fn: () => Promise<unknown>) => {
  const start = performance.now()
  await fn()
  return performance.now() - start
}

const best = async (times: number, fn: () => Promise<number>) => {
  let min = Number.POSITIVE_INFINITY
  for (let i = 0; i < times; i++) min = Math.min(min, await fn())
  return min
}

const generate = async (root: string) => {
  const perDir = 50
  const subdirs = 20
  for (let n = 0; n < files; ) {
    const dir = join(root, `pkg-${Math.floor(n / (perDir * subdirs))}`, `mod-${Math.floor(n / perDir) % subdirs}`)
    await mkdir(dir, { recursive: true })
    await Promise.all(
      Array.from({ length: Math.min(perDir, files - n) }, (_, i) =>
        writeFile(join(dir, `file-${i}.ts`), `export const value${n + i} = ${n + i}\n`)
      )
    )
    n += perDir
  }
}

/** A Snapshot service for `root` with its own fresh data dir. */
const service = async (base: string, root: string, name: string) => {
  const layer = SnapshotGit.layer.pipe(
    Layer.provide(Layer.mergeAll(Paths.layerTest(root, { data: join(base, name), home: base }), Config.layerTest({})))
  )
  const runtime = ManagedRuntime.make(layer)
  const snapshot = await runtime.runPromise(
    Effect.gen(function* () {
      return yield* Snapshot
    })
  )
  return { snapshot, runtime }
}

const main = async (base: string) => {
  const root = join(base, "tree")
  await mkdir(root)
  process.stderr.write(`generating ${files} files…\n`)
  await generate(root)

  let raws = 0
  const raw = () =>
    time(async () => {
      const repo = join(base, `raw-${raws++}`)
      await git(base, "init", "-q", "--bare", repo)
      await git(root, "--git-dir", repo, "--work-tree", root, "add", "-A")
      await git(root, "--git-dir", repo, "--work-tree", root, "write-tree")
    })

  let plains = 0
  const firstPlain = () =>
    time(async () => {
      const { snapshot, runtime } = await service(base, root, `plain-${plains++}`)
      await runtime.runPromise(snapshot.track)
      await runtime.dispose()
    })

  const rawFirst = await best(2, raw)
  const plainFirst = await best(2, firstPlain)

  // the same tree as the user's own repository: committed, so the first track can seed from it
  await git(root, "init", "-q")
  await git(root, "add", "-A")
  await git(root, "commit", "-q", "-m", "generated")
  let seeds = 0
  const seeded = async () => {
    const s = await service(base, root, `seeded-${seeds++}`)
    const ms = await time(() => s.runtime.runPromise(s.snapshot.track))
    return { ...s, ms }
  }
  const a = await seeded()
  await a.runtime.dispose()
  const s = await seeded()
  const seededFirst = Math.min(a.ms, s.ms)

  let edits = 0
  const edit = () => writeFile(join(root, "pkg-3", "mod-4", "file-5.ts"), `export const edited = ${edits++}\n`)
  const base0 = (await s.runtime.runPromise(s.snapshot.track)) as string
  const incremental = await best(3, async () => {
    await edit()
    return time(() => s.runtime.runPromise(s.snapshot.track))
  })
  const patch = await best(3, async () => {
    await edit()
    return time(() => s.runtime.runPromise(s.snapshot.patch(base0)))
  })
  await s.runtime.dispose()

  const row = (name: string, ms: number, target: string) =>
    `| ${name} | ${ms.toFixed(0)} ms | ${(ms / rawFirst).toFixed(2)}× | ${target} |`
  process.stdout.write(
    [
      `Snapshot benchmark: ${files} files, baseline raw \`git add -A && git write-tree\` = ${rawFirst.toFixed(0)} ms`,
      "",
      "| case | time | ratio to raw git | target |",
      "|---|---|---|---|",
      row("first track(), plain folder (hashes every file)", plainFirst, "≤ 1.2×"),
      row("first track(), git repository (seeded)", seededFirst, "≤ 1.2×"),
      row("track() after one file changed", incremental, "≤ 150 ms"),
      row("patch() after one file changed", patch, "≤ 150 ms"),
      ""
    ].join("\n")
  )
}

const base = await realpath(await mkdtemp(join(tmpdir(), "lathe-bench-snapshot-")))
try {
  await main(base)
} finally {
  await rm(base, { recursive: true, force: true, maxRetries: 5 })
}
