/**
 * What the guard's session has cost the process by the moment its first model request arrives: page faults (minor,
 * from `/proc/<pid>/stat`), CPU time and resident memory, for the floor agent (`bench/floor-agent.mjs`) and one or
 * more builds, alternated run by run (every other round in the reverse order), warm (a shared code cache written by
 * a first run of each, not reported).
 *
 * On a virtual machine a page fault can cost far more than the work around it: on the 2-core machines CI runs on, a
 * page's first touch costs ~16 µs and the first write to a page after a fork ~20 µs, so a start-up's faults can be a
 * third of its time to the first request (docs/loop-performance.md, "Page faults"). Time moves with the machine's load;
 * the fault count does not, which makes it the steadier figure for a change meant to touch less memory.
 *
 *   npx tsx --conditions=@lathe/source bench/startup-faults.ts
 *   npx tsx --conditions=@lathe/source bench/startup-faults.ts --rounds 15 --build packages/cli/dist/base/lathe.js
 *
 * `--build` (repeatable; default the CLI bundle) names the builds, each as `path[@NAME=value…]` to give it
 * environment variables (`dist/bundle/lathe.js@LATHE_NODE_HEAP=small`). `--stack` adds the stack agent
 * (`bench/stack-agent.ts`, bundled and started as the run build is: `bench/stack-build.ts`): the same session on the
 * libraries Lathe is built on with nothing of Lathe's own, the floor under Lathe that trimming Lathe cannot move.
 * Linux only.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { startScriptedServer } from "@lathe/core/testing"
import { sessionEnv, sessionRepo, sessionScript } from "./loop-session.js"
import { buildStackAgent } from "./stack-build.js"

const STEPS = 20
const here = fileURLToPath(new URL(".", import.meta.url))
const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "9" },
    build: { type: "string", multiple: true },
    stack: { type: "boolean", default: false }
  }
})
const rounds = Number(values.rounds)
const work = mkdtempSync(join(tmpdir(), "lathe-startup-faults-"))
const specs = [
  "floor",
  ...(values.stack ? [await buildStackAgent(join(work, "stack"))] : []),
  ...(values.build ?? [join(here, "../packages/cli/dist/bundle/lathe.js")])
]

interface Taken {
  readonly faults: number
  readonly cpuMs: number
  readonly rssMiB: number
  readonly firstMs: number
  /** The median step gap of the whole session (the model's answer sent to the next request received). */
  readonly gapMs: number
}

/** Minor faults and user + system CPU (ms, at the kernel's 10 ms tick) of a running process. */
const processStat = (pid: number): { readonly faults: number; readonly cpuMs: number } => {
  const fields = (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1] ?? "").split(" ")
  return { faults: Number(fields[7]), cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 }
}

const residentMiB = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024

const median = (list: ReadonlyArray<number>): number =>
  [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? Number.NaN

/** One warm run of `spec` in `repo`: the figures when its first request arrived. */
const once = async (spec: string, repo: string, work: string): Promise<Taken> => {
  const [path = "", ...assignments] = spec.split("@")
  const extra = Object.fromEntries(assignments.map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]))
  let pid = 0
  let taken: Taken | undefined
  const started = performance.now()
  const script = sessionScript(STEPS)
  const server = await startScriptedServer((request, index) => {
    if (index === 0 && taken === undefined)
      taken = { ...processStat(pid), rssMiB: residentMiB(pid), firstMs: performance.now() - started, gapMs: 0 }
    return script(request, index)
  })
  const home = mkdtempSync(join(work, "home-"))
  const env = {
    ...sessionEnv(home, server.url, join(work, "compile-cache")),
    LATHE_CODE_CACHE: join(work, `code-cache-${specs.indexOf(spec)}`),
    ...extra
  }
  const args =
    path === "floor"
      ? [join(here, "floor-agent.mjs"), "read the files"]
      : [resolve(path), "run", "--format", "json", "--yes", "read the files"]
  const child = spawn(process.execPath, args, { cwd: repo, env, stdio: "ignore" })
  pid = child.pid ?? 0
  const code = await new Promise<number | null>((done) => child.on("close", done))
  await server.close()
  rmSync(home, { recursive: true, force: true })
  if (code !== 0 || taken === undefined) throw new Error(`${spec}: the session failed (exit ${code})`)
  const { requests } = server
  const gaps = requests.slice(1).map((r, i) => r.receivedAt - (requests[i]?.answeredAt ?? Number.NaN))
  return { ...taken, gapMs: median(gaps) }
}

const main = async () => {
  try {
    const repo = sessionRepo(work, STEPS)
    for (const spec of specs) await once(spec, repo, work) // writes the caches
    const all = new Map<string, Array<Taken>>(specs.map((spec) => [spec, []]))
    // Every other round in the reverse order: on this machine the run after another build's pays for it (by ±1–2 ms
    // a step), so no build is always the one that comes last.
    for (let round = 0; round < rounds; round++)
      for (const spec of round % 2 === 0 ? specs : [...specs].reverse())
        all.get(spec)?.push(await once(spec, repo, work))
    const floor = all.get("floor") ?? []
    const floorFaults = median(floor.map((t) => t.faults))
    const floorFirst = median(floor.map((t) => t.firstMs))
    console.log(
      `startup-faults: ${rounds} warm runs each, alternated; medians at the first request (and of the step gap)`
    )
    for (const [spec, list] of all) {
      const faults = median(list.map((t) => t.faults))
      const first = median(list.map((t) => t.firstMs))
      const versus =
        spec === "floor"
          ? ""
          : `  (floor + ${faults - floorFaults} faults, first request ×${(first / floorFirst).toFixed(2)})`
      console.log(
        `  ${String(faults).padStart(6)} faults  ${String(median(list.map((t) => t.cpuMs))).padStart(4)} ms CPU  ` +
          `${median(list.map((t) => t.rssMiB))
            .toFixed(1)
            .padStart(6)} MiB  first request ${first.toFixed(0).padStart(4)} ms  ` +
          `gap ${median(list.map((t) => t.gapMs))
            .toFixed(1)
            .padStart(4)} ms  ${spec}${versus}`
      )
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

await main()
