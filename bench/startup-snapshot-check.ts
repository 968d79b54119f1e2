/**
 * Startup-snapshot experiment (docs/startup-snapshot.md), step 2's check: `lathe run --format json` through the
 * normal bundle and through the `lathe run` snapshot, against the same scripted model (three `read` calls, then an
 * answer), must print the same events. Ids, times and durations differ between any two runs, so they are masked
 * before comparing. Exits 1 with the first differing line when they differ.
 *
 *   npx nx run @lathe/cli:bundle && (cd packages/cli && node scripts/snapshot/build.mjs run)
 *   npx tsx --conditions=@lathe/source bench/startup-snapshot-check.ts
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedReply, startScriptedServer } from "@lathe/core/testing"

const cli = fileURLToPath(new URL("../packages/cli/dist/", import.meta.url))
const builds = {
  bundle: [join(cli, "bundle/lathe.js")],
  snapshot: ["--snapshot-blob", join(cli, "snapshot/lathe-run.blob"), "--"]
}

/** Masks what differs between any two runs: ids, timestamps, durations, temp paths. */
const normalise = (line: string, dirs: ReadonlyArray<string>): string => {
  let out = line
  for (const dir of dirs) out = out.split(dir).join("<dir>")
  return out
    .replace(/"(\w*I[dD]|id)":"[^"]*"/g, '"$1":"<id>"')
    .replace(/"(time|created|updated|start|end|completed|receivedAt|[a-z]*At)":\d+/g, '"$1":0')
    .replace(/"(duration|ms|elapsed)\w*":[\d.]+/g, '"$1":0')
}

const runOnce = async (args: ReadonlyArray<string>): Promise<{ lines: Array<string>; code: number | null }> => {
  const script = (_request: unknown, index: number): ScriptedReply | undefined =>
    index < 3
      ? { steps: [{ tool: "read", input: { filePath: "a.txt" } }] }
      : index === 3
        ? { steps: [{ text: "done" }] }
        : undefined
  const server = await startScriptedServer(script)
  const repo = mkdtempSync(join(tmpdir(), "lathe-snap-check-repo-"))
  const home = mkdtempSync(join(tmpdir(), "lathe-snap-check-home-"))
  writeFileSync(join(repo, "a.txt"), "alpha\n")
  execFileSync("git", ["init", "-q"], { cwd: repo })
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    LATHE_DATA_DIR: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
    LATHE_BASE_URL: server.url,
    LATHE_MODEL: "bench"
  }
  const { stdout, code } = await new Promise<{ stdout: string; code: number | null }>((resolve, reject) => {
    const child = spawn(process.execPath, [...args, "run", "--format", "json", "--yes", "read a.txt 3 times"], {
      cwd: repo,
      env
    })
    let stdout = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on("data", (chunk: Buffer) => process.stderr.write(chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ stdout, code }))
  })
  await server.close()
  const lines = stdout
    .trim()
    .split("\n")
    .map((line) => normalise(line, [repo, home, server.url]))
  rmSync(repo, { recursive: true, force: true })
  rmSync(home, { recursive: true, force: true })
  return { lines, code }
}

const a = await runOnce(builds.bundle)
const b = await runOnce(builds.snapshot)
const differs = a.lines.findIndex((line, i) => line !== b.lines[i])
if (a.code !== 0 || b.code !== 0 || a.lines.length !== b.lines.length || differs !== -1) {
  console.log(`exit codes ${a.code} / ${b.code}, ${a.lines.length} / ${b.lines.length} lines`)
  if (differs !== -1)
    console.log(
      `first difference, line ${differs + 1}:\n  bundle:   ${a.lines[differs]}\n  snapshot: ${b.lines[differs]}`
    )
  process.exitCode = 1
} else console.log(`same output: ${a.lines.length} JSON events, exit code 0 from both (ids and times masked)`)
