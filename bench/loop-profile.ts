/**
 * Where `lathe run`'s time goes, by original source file: a companion to `bench/loop.ts` for finding what to cut.
 *
 * Builds the run command with the CLI's bundle options (`packages/cli/scripts/bundle.mjs`) but as unminified ES
 * modules with source maps and Node's compile cache, not as the shipped CommonJS file with its V8 code cache: lazy
 * compilation of each function shows up as it would on a run without that cache. It then runs a session of `read`
 * calls against a scripted OpenAI-compatible server on 127.0.0.1 under `--cpu-prof`, and prints CPU time by package
 * and by original file for two windows: start-up (process start to the first request leaving, i.e. the first sample
 * inside the provider's `postToApi`) and the steps after it.
 * Node's own modules show as `node:…`; GC and idle as V8 names them. Figures are profiler samples (the profiler
 * slows everything down): read them as shares, not as times.
 *
 *   npx tsx --conditions=@lathe/source bench/loop-profile.ts            # 20 steps
 *   LATHE_PROFILE_STEPS=120 npx tsx --conditions=@lathe/source bench/loop-profile.ts
 *   LATHE_PROFILE_REPO=/path/to/big/repo npx tsx --conditions=@lathe/source bench/loop-profile.ts
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { startScriptedServer } from "@lathe/core/testing"
import { commitAll, sessionEnv, sessionScript, writeSessionFiles } from "./loop-session.js"

const STEPS = Number(process.env.LATHE_PROFILE_STEPS ?? 20)
/**
 * `LATHE_PROFILE_REPO`: an existing git repository to run in (it needs the session's files, see `writeSessionFiles`,
 * in its top directory), e.g. one of 50,000 files; by default a fresh repository with just those files.
 */
const givenRepo = process.env.LATHE_PROFILE_REPO || undefined
const cli = fileURLToPath(new URL("../packages/cli/", import.meta.url))

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}
interface Profile {
  readonly nodes: ReadonlyArray<{ id: number; callFrame: CallFrame; children?: ReadonlyArray<number> }>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** The run command, bundled like the CLI's but readable and mapped, into a directory inside the CLI package. */
const buildMapped = async (): Promise<string> => {
  const { build } = await import("esbuild")
  const script = pathToFileURL(join(cli, "scripts/bundle.mjs")).href
  const { bundleOptions } = (await import(script)) as {
    bundleOptions: (options: { entryPoints: Record<string, string>; outdir: string }) => object
  }
  // Inside the package, so the bundle's external packages resolve from its node_modules.
  const outdir = join(cli, "dist/profile")
  rmSync(outdir, { recursive: true, force: true })
  await build({
    ...bundleOptions({ entryPoints: { run: join(cli, "src/commands/run.ts") }, outdir }),
    minify: false,
    sourcemap: "linked",
    logLevel: "silent"
  })
  // What bin.ts and main.ts do before the run command, minus the argument dispatch.
  writeFileSync(
    join(outdir, "entry.mjs"),
    'import module from "node:module"\nmodule.enableCompileCache?.()\nconst { runCommand } = await import("./run.js")\n' +
      "process.exitCode = await runCommand(process.argv.slice(2), { stdout: (t) => process.stdout.write(t), " +
      "stderr: (t) => process.stderr.write(t), env: process.env, cwd: process.cwd(), isTTY: false, " +
      "stdin: process.stdin, stdinIsTTY: false })\n"
  )
  return outdir
}

const session = async (entry: string, profileDir: string | undefined) => {
  const repo = givenRepo ?? mkdtempSync(join(tmpdir(), "lathe-profile-repo-"))
  if (givenRepo === undefined) {
    writeSessionFiles(repo, STEPS)
    commitAll(repo)
  }
  const server = await startScriptedServer(sessionScript(STEPS))
  const home = mkdtempSync(join(tmpdir(), "lathe-profile-home-"))
  const flags = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--cpu-prof-interval=100"] : []
  const child = spawn(process.execPath, [...flags, entry, "--format", "json", "--yes", "read a.txt"], {
    cwd: repo,
    env: sessionEnv(home, server.url, join(tmpdir(), "lathe-profile-compile-cache")),
    stdio: ["ignore", "ignore", "inherit"]
  })
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
  await server.close()
  rmSync(home, { recursive: true, force: true })
  if (givenRepo === undefined) rmSync(repo, { recursive: true, force: true })
  if (code !== 0 || server.requests.length !== STEPS) throw new Error(`run failed: code ${code}`)
}

/** CPU time per package and per original file, split at the first sample inside `ClientRequest` (or the AI SDK's `postToApi`). */
const aggregate = (profile: Profile) => {
  const maps = new Map<string, SourceMap | undefined>()
  const mapOf = (url: string): SourceMap | undefined => {
    if (!url.startsWith("file:") || !url.includes("/dist/profile/")) return undefined
    if (!maps.has(url)) {
      const file = `${fileURLToPath(url)}.map`
      maps.set(url, existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, "utf8"))) : undefined)
    }
    return maps.get(url)
  }
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const sourceOf = (frame: CallFrame): string => {
    const map = mapOf(frame.url)
    // A position with no original source is the bundle's own glue (module wrappers, esbuild's helpers).
    if (map) return map.findEntry(frame.lineNumber, frame.columnNumber)?.originalSource ?? "(bundle glue)"
    if (frame.url === "") return frame.functionName
    return frame.url.startsWith("node:") || !frame.url.includes("/")
      ? `node:${frame.url.replace(/^node:/, "")}`
      : frame.url
  }
  const packageOf = (source: string): string =>
    /node_modules\/((@[^/]+\/)?[^/]+)/.exec(source)?.[1] ??
    /(packages|plugins)\/([^/]+)\//.exec(source)?.slice(1, 3).join("/") ??
    source.replace(/^(node:[^/]+).*$/, "$1")
  const fileOf = (source: string): string =>
    source.replace(/^.*node_modules\//, "").replace(/^.*\/(?=(packages|plugins)\/)/, "")
  // The first request leaves through node:http's ClientRequest (the run's own chat-completions client) or, for a
  // provider package, the AI SDK's postToApi.
  const requestFrames = new Set(["ClientRequest", "postToApi"])
  const inRequest = (id: number): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      if (requestFrames.has(nodes.get(at)?.callFrame.functionName ?? "")) return true
    return false
  }
  const windows = { "start-up": { total: 0, byPackage: new Map<string, number>(), byFile: new Map<string, number>() } }
  const steps = { total: 0, byPackage: new Map<string, number>(), byFile: new Map<string, number>() }
  let started = false
  for (const [i, id] of profile.samples.entries()) {
    const node = nodes.get(id)
    if (node === undefined) continue
    if (!started && inRequest(id)) started = true
    const window = started ? steps : windows["start-up"]
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000
    const source = sourceOf(node.callFrame)
    window.total += ms
    window.byPackage.set(packageOf(source), (window.byPackage.get(packageOf(source)) ?? 0) + ms)
    window.byFile.set(fileOf(source), (window.byFile.get(fileOf(source)) ?? 0) + ms)
  }
  return { "start-up": windows["start-up"], steps }
}

const main = async () => {
  const outdir = await buildMapped()
  const entry = join(outdir, "entry.mjs")
  await session(entry, undefined) // fills the compile cache, as a second start would find it
  const profileDir = mkdtempSync(join(tmpdir(), "lathe-profile-"))
  await session(entry, profileDir)
  const [file] = readdirSync(profileDir).filter((name) => name.endsWith(".cpuprofile"))
  if (file === undefined) throw new Error("no profile written")
  const profile = JSON.parse(readFileSync(join(profileDir, file), "utf8")) as Profile
  rmSync(profileDir, { recursive: true, force: true })
  const top = (map: Map<string, number>, total: number, count: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(
        ([name, ms]) => `  ${ms.toFixed(1).padStart(7)} ms ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${name}`
      )
      .join("\n")
  for (const [name, window] of Object.entries(aggregate(profile))) {
    console.log(`\n${name}: ${window.total.toFixed(1)} ms of samples (${STEPS} steps in the session)`)
    console.log(`by package:\n${top(window.byPackage, window.total, 15)}`)
    console.log(`by file:\n${top(window.byFile, window.total, 25)}`)
  }
  rmSync(outdir, { recursive: true, force: true })
}

await main()
