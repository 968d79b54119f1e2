/**
 * Workspace checkpoint benchmark: `Workspaces.checkpoint` on a 50,000-file repository (memory log), next to
 * `git status --porcelain` on the same tree in the same run (the baseline: git's own cost to find what changed).
 * Reports the first checkpoint (seeds the private index), then the median of repeated checkpoints with nothing
 * changed, with 3 files edited, and with one new file, each as a ratio to the baseline's median.
 * Target: every checkpoint after the first well under a second.
 *
 *   npx tsx --conditions=@lathe/source bench/workspace.ts [files]
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { MemoryWorkspaceLog, Workspaces } from "@lathe/workspace"
import { Effect, Layer } from "effect"

const FILES = Number(process.argv[2] ?? 50_000)
const RUNS = 7

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const makeRepo = (files: number): string => {
  const dir = mkdtempSync(join(tmpdir(), `lathe-bench-ws-${files}-`))
  for (let i = 0; i < files; i++) {
    const sub = join(dir, `d${Math.floor(i / 500)}`, `e${Math.floor(i / 50) % 10}`)
    if (i % 50 === 0) mkdirSync(sub, { recursive: true })
    writeFileSync(join(sub, `f${i}.txt`), `file ${i}\n`)
  }
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: dir })
  execFileSync("git", ["add", "-A"], { cwd: dir })
  execFileSync("git", ["-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "init"], { cwd: dir })
  return dir
}

const time = async <A>(run: () => Promise<A>): Promise<number> => {
  const start = performance.now()
  await run()
  return performance.now() - start
}

const source = makeRepo(FILES)
const root = mkdtempSync(join(tmpdir(), "lathe-bench-ws-root-"))
const layer = Workspaces.layer({ root }).pipe(Layer.provideMerge(MemoryWorkspaceLog.layer()))
const ws = await Effect.runPromise(Effect.provide(Workspaces, layer))
const opened = performance.now()
const dir = await Effect.runPromise(ws.open("ses_bench", { repo: source }))
const openMs = performance.now() - opened
const checkpoint = () => Effect.runPromise(ws.checkpoint("ses_bench"))
const status = async () => execFileSync("git", ["status", "--porcelain"], { cwd: dir })

writeFileSync(join(dir, "d0/e0/f0.txt"), "first edit\n")
const firstMs = await time(checkpoint)
await status() // warm, as the checkpoint's first run was
const baseline: Array<number> = []
const unchanged: Array<number> = []
const edited: Array<number> = []
const added: Array<number> = []
for (let run = 0; run < RUNS; run++) {
  baseline.push(await time(status))
  unchanged.push(await time(checkpoint))
  for (const i of [1, 2_000, FILES - 1])
    writeFileSync(join(dir, `d${Math.floor(i / 500)}`, `e${Math.floor(i / 50) % 10}`, `f${i}.txt`), `edit ${run}\n`)
  edited.push(await time(checkpoint))
  writeFileSync(join(dir, `new-${run}.txt`), `new ${run}\n`)
  added.push(await time(checkpoint))
}

const base = median(baseline)
const row = (name: string, ms: number) =>
  `${name.padEnd(34)} ${ms.toFixed(1).padStart(8)} ms   ${(ms / base).toFixed(2).padStart(6)}× git status`
const lines = [
  `workspace checkpoint, ${FILES} files, ${RUNS} runs (medians)`,
  row("git status --porcelain (baseline)", base),
  row("open (clone + checkout)", openMs),
  row("first checkpoint (seeds the index)", firstMs),
  row("checkpoint, nothing changed", median(unchanged)),
  row("checkpoint, 3 files edited", median(edited)),
  row("checkpoint, 1 file added", median(added))
]
process.stdout.write(`${lines.join("\n")}\n`)
rmSync(source, { recursive: true, force: true })
rmSync(root, { recursive: true, force: true })
