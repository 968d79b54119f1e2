/**
 * What a step's gap is made of: the CPU profile samples taken inside the gaps of one `bench/long-session.ts` run, per
 * gap, by module and by the nearest function of Lathe's own on the stack (effect's runtime, node and the libraries
 * count for the Lathe function that called them; samples with none above them are listed by their own frame).
 *
 *   (cd packages/cli && LATHE_BUNDLE_MINIFY=0 LATHE_BUNDLE_OUTDIR=dist/plain node scripts/bundle.mjs)
 *   npx tsx --conditions=@lathe/source bench/long-session.ts --steps 200 --kind read \
 *     --bin packages/cli/dist/plain/lathe.js --node-flag=--cpu-prof --node-flag=--cpu-prof-dir=/tmp/gaps \
 *     --node-flag=--cpu-prof-interval=50 --windows /tmp/gaps/windows
 *   npx tsx bench/gap-profile.ts /tmp/gaps/CPU.<…>.<pid>.….cpuprofile /tmp/gaps/windows.<pid>.json \
 *     packages/cli/dist/plain/run/run.cjs [--from 21] [--top 40]
 *
 * The profile and the windows file of the same run share its pid. The bundle must be unminified: its `// <path>`
 * comments (one before each module, as esbuild writes them) name the module of each line. Figures are profiled time,
 * which the profiler inflates (~1.3–1.5× on the 2-core machine): compare shares, not milliseconds.
 */
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { from: { type: "string", default: "21" }, top: { type: "string", default: "40" } }
})
const [profileFile, windowsFile, bundleFile] = positionals
if (profileFile === undefined || windowsFile === undefined || bundleFile === undefined) {
  console.error("usage: gap-profile.ts <profile.cpuprofile> <windows.json> <unminified run.cjs> [--from N] [--top N]")
  process.exit(2)
}
const profile = JSON.parse(readFileSync(profileFile, "utf8")) as Profile
/** The gaps as `[start, end]` in µs of the profile's clock, from step `--from` on (the first ones warm the code up). */
const gaps = (JSON.parse(readFileSync(windowsFile, "utf8")) as Array<[number, number]>).slice(Number(values.from) - 1)

// The module of each line of the bundle, from esbuild's `// <path>` comment before each module.
const moduleOfLine: Array<string> = []
let current = "(bundle prelude)"
for (const line of readFileSync(bundleFile, "utf8").split("\n")) {
  const path = /^\/\/ (\S+\.(?:ts|js|mjs|cjs|json))$/.exec(line)?.[1]
  if (path !== undefined) current = path.replace(/^.*node_modules\//, "").replace(/^(\.\.\/)+/, "")
  moduleOfLine.push(current)
}
const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
const parent = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
const names = new Map<number, string>()
const nameOf = (id: number): string => {
  let name = names.get(id)
  if (name === undefined) {
    const frame = nodes.get(id)?.callFrame
    if (frame === undefined) name = "?"
    else if (frame.url === bundleFile || frame.url.endsWith("/run/run.cjs"))
      name = `${moduleOfLine[frame.lineNumber] ?? "?"} ${frame.functionName}`
    else name = `${frame.url.replace(/^.*\//, "") || "(native)"} ${frame.functionName}`
    names.set(id, name)
  }
  return name
}
/** A frame's module; a native one (GC, idle, a system call such as `writev`) by its own name. */
const moduleOf = (id: number): string => {
  const name = nameOf(id)
  return name.startsWith("(native)") ? name : (name.split(" ")[0] ?? "?")
}
/** A frame of Lathe's own packages and plugins (what the bundle's comments name `core/src/…`, `tools/src/…`). */
const isLathe = (name: string): boolean => /^(?:[a-z-]+\/src\/|\.\.\/[a-z-]+\/src\/)/.test(name)

const byModule = new Map<string, number>()
const byOwner = new Map<string, number>()
const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms)
let at = profile.startTime
let gap = 0
let total = 0
for (const [i, id] of profile.samples.entries()) {
  at += profile.timeDeltas[i] ?? 0
  while (gap < gaps.length && at > (gaps[gap]?.[1] ?? 0)) gap++
  if (gap >= gaps.length) break
  if (at < (gaps[gap]?.[0] ?? 0)) continue
  const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000
  total += ms
  add(byModule, moduleOf(id), ms)
  let owner = `(none) ${nameOf(id)}`
  for (let up: number | undefined = id; up !== undefined; up = parent.get(up))
    if (isLathe(nameOf(up))) {
      owner = nameOf(up)
      break
    }
  add(byOwner, owner, ms)
}

const top = Number(values.top)
const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`)
  for (const [name, ms] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`  ${(ms / gaps.length).toFixed(3).padStart(7)} ms  ${name}`)
}
console.log(`${gaps.length} gaps from step ${values.from}: ${(total / gaps.length).toFixed(2)} ms of samples a gap`)
print("by module (self time, ms a gap)", byModule)
print("by the nearest function of Lathe's own (ms a gap)", byOwner)
