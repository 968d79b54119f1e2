/**
 * Startup-snapshot experiment (docs/startup-snapshot.md), step 1: how long a process takes from spawn to exit when
 * it evaluates the modules of the first model request (effect, zod, ai, the OpenAI-compatible provider, core) and
 * uses them trivially — evaluated normally from one CJS bundle (with and without the compile cache), against
 * restored from a V8 startup snapshot of the same bundle. Each figure is a median over runs that alternate between
 * the variants, next to `node -e 0` measured in the same run.
 *
 *   (cd packages/cli && node scripts/snapshot/build.mjs heavy) && npx tsx bench/startup-snapshot.ts
 *
 * `LATHE_BENCH_RUNS` (default 15) sets the runs per variant.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const RUNS = Number(process.env.LATHE_BENCH_RUNS ?? 15)
const dir = fileURLToPath(new URL("../packages/cli/dist/snapshot/", import.meta.url))
const script = join(dir, "heavy.cjs")
const blob = join(dir, "heavy.blob")
if (!existsSync(script) || !existsSync(blob))
  throw new Error(
    `No ${script} or ${blob}: build them first with (cd packages/cli && node scripts/snapshot/build.mjs heavy).`
  )

const cache = mkdtempSync(join(tmpdir(), "lathe-snap-cache-"))
const variants: ReadonlyArray<{
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly env?: NodeJS.ProcessEnv
}> = [
  { name: "node -e 0", args: ["-e", "0"] },
  { name: "bundle, evaluated (no compile cache)", args: [script] },
  { name: "bundle, evaluated (compile cache)", args: [script], env: { NODE_COMPILE_CACHE: cache } },
  { name: "snapshot of the bundle", args: ["--snapshot-blob", blob] },
  { name: "snapshot of the bundle, without code cache", args: ["--snapshot-blob", join(dir, "heavy-nocc.blob")] }
]

const median = (values: ReadonlyArray<number>) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN

/** Wall time (ms) from spawn to exit of one run; a failed run throws with its stderr. */
const once = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) => {
  const start = performance.now()
  const result = spawnSync(process.execPath, [...args], { env: { PATH: process.env.PATH, ...env }, encoding: "utf8" })
  const ms = performance.now() - start
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} failed (${result.status}): ${result.stderr}`)
  return ms
}

for (const variant of variants) once(variant.args, variant.env) // warm the page cache and the compile cache
const times = variants.map(() => [] as Array<number>)
for (let i = 0; i < RUNS; i++)
  for (const [v, variant] of variants.entries()) times[v]?.push(once(variant.args, variant.env))
const base = median(times[0] ?? [])
for (const [v, variant] of variants.entries()) {
  const ms = median(times[v] ?? [])
  console.log(
    `${variant.name}: ${ms.toFixed(1)} ms (${(ms / base).toFixed(2)}× node -e 0, ${(ms - base).toFixed(1)} ms over it)`
  )
}
console.log(`(${RUNS} runs each, alternated; wall time from spawn to exit)`)
rmSync(cache, { recursive: true, force: true })
