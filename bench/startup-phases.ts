/**
 * Where `lathe run`'s time to its first model request goes, phase by phase: the guard's session (`bench/guard.ts`,
 * `bench/loop-session.ts`) through the CLI bundle with `LATHE_STARTUP_MARKS=1`, which makes the marks in the code
 * (`startupMark` of `@lathe/core/startup-marks`: the launcher, the run build's read, compile and evaluation, the
 * command's steps, the loop's first step) write `lathe-mark <name> <ms since the process started>` on stderr.
 * Warm, as the guard's first-request line: each run in a fresh home, Node's compile cache and Lathe's code cache shared
 * and written by a first run that is not reported. Prints each mark's median and the median of each phase (one
 * mark to the next, per run).
 *
 *   npx nx run @lathe/cli:bundle && npx tsx --conditions=@lathe/source bench/startup-phases.ts
 *   npx tsx --conditions=@lathe/source bench/startup-phases.ts --runs 21 --build <path/to/lathe.js>
 *
 * Figures are wall-clock on whatever else the machine does: compare phases within one run of this bench, and compare
 * builds with the guard or with instruction counts (docs/loop-performance.md).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { startScriptedServer } from "@lathe/core/testing"
import { runForStderr, sessionEnv, sessionRepo, sessionScript } from "./loop-session.js"

const STEPS = 20

const { values } = parseArgs({
  options: { runs: { type: "string", default: "15" }, build: { type: "string" } }
})
const here = fileURLToPath(new URL(".", import.meta.url))
const build = resolve(values.build ?? join(here, "../packages/cli/dist/bundle/lathe.js"))
const runs = Number(values.runs)

const median = (list: ReadonlyArray<number>): number => {
  const sorted = [...list].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

/** One warm run: each mark's first time (ms since the process started) and the server's view of the first request. */
const once = async (repo: string, work: string): Promise<Map<string, number>> => {
  const server = await startScriptedServer(sessionScript(STEPS))
  const home = mkdtempSync(join(work, "home-"))
  const env = {
    ...sessionEnv(home, server.url, join(work, "compile-cache")),
    LATHE_CODE_CACHE: join(work, "code-cache"),
    LATHE_STARTUP_MARKS: "1"
  }
  const started = performance.now()
  const args = [build, "run", "--format", "json", "--yes", "read the files"]
  const { code, stderr } = await runForStderr(process.execPath, args, repo, env)
  await server.close()
  rmSync(home, { recursive: true, force: true })
  if (code !== 0) throw new Error(`${build}: the session failed (exit ${code}):\n${stderr}`)
  const marks = new Map<string, number>()
  for (const [, name, ms] of stderr.matchAll(/^lathe-mark (.+) ([\d.]+)$/gm))
    if (name !== undefined && !marks.has(name)) marks.set(name, Number(ms))
  marks.set("(server: request received, from spawn)", (server.requests[0]?.receivedAt ?? Number.NaN) - started)
  return marks
}

const main = async () => {
  const work = mkdtempSync(join(tmpdir(), "lathe-startup-phases-"))
  try {
    const repo = sessionRepo(work, STEPS)
    await once(repo, work) // writes the caches
    const all: Array<Map<string, number>> = []
    for (let i = 0; i < runs; i++) all.push(await once(repo, work))
    const names = [...new Set(all.flatMap((marks) => [...marks.keys()]))].filter((name) => !name.startsWith("("))
    const at = (name: string) => median(all.map((marks) => marks.get(name) ?? Number.NaN))
    names.sort((a, b) => at(a) - at(b))
    console.log(`startup-phases: ${build}, ${runs} warm runs (medians, ms since the process started)`)
    for (const [i, name] of names.entries()) {
      const previous = names[i - 1]
      const phase =
        previous === undefined
          ? Number.NaN
          : median(all.map((marks) => (marks.get(name) ?? Number.NaN) - (marks.get(previous) ?? Number.NaN)))
      console.log(
        `  ${at(name).toFixed(1).padStart(7)}  ${Number.isNaN(phase) ? "       " : `+${phase.toFixed(1).padStart(5)}`}  ${name}`
      )
    }
    const server = "(server: request received, from spawn)"
    console.log(`  ${at(server).toFixed(1).padStart(7)}           ${server}`)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

await main()
