import { spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, type ServerStep, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// "Walls that hold": the secrets in Lathe's environment and config reach no child process, and a plugin that runs the
// project's programs (the format plugin) follows trust and the sandbox.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** Secrets in the environment Lathe starts with; none of these values may reach a command. */
const SECRETS = {
  CORP_AUTH: "corp-auth-e2e-0123456789",
  GH_PAT: "ghp_e2epat0123456789abcdef",
  DATABASE_URL: "postgres://u:pw-e2e-0123456789@h/db",
  BACKUP_STORE: "postgres://lathe:st0re-e2e-pw@db.internal:5432/lathe",
  // The header value under an innocent name: only matching by value catches it.
  MIRROR: "corp-auth-e2e-0123456789"
}
const VALUES = ["corp-auth-e2e-0123456789", "ghp_e2epat0123456789abcdef", "pw-e2e-0123456789", "st0re-e2e-pw"]

/** A throwaway home whose user config sends `CORP_AUTH` as a header to the scripted server, as the model provider. */
const setup = async (steps: ReadonlyArray<ServerStep>, config: Record<string, unknown> = {}) => {
  server = await startScriptedServer([{ steps }, { steps: [{ text: "finished" }] }])
  const box = sandbox()
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  const user = {
    model: "corp/m",
    provider: {
      corp: {
        type: "openai-compatible",
        baseURL: server.url,
        headers: { "X-Corp-Auth": "Bearer {env:CORP_AUTH}" },
        models: { m: {} }
      }
    },
    ...config
  }
  writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify(user))
  return { ...box, env: { ...box.env, ...SECRETS, EDITOR: "vi" }, server }
}

/** What the model server was sent after the tool ran (the tool's output is in it). */
const toolResult = (s: ScriptedServer): string => JSON.stringify(s.requests[1]?.body ?? "")

describe("walls: secrets stay out of every child process", () => {
  it("env through bash (and Lathe's /proc entry as the sandbox shows it) shows no secret; plain bash shows them all", async () => {
    const command = "env; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ"
    const { project, env } = await setup([{ tool: "bash", input: { command, description: "show env" } }])
    // Without Lathe: the same command under plain bash, with the same environment, prints every secret.
    const plain = spawnSync("bash", ["-c", "env"], { cwd: project, env, encoding: "utf8" })
    for (const value of VALUES) assert.include(plain.stdout, value)

    const run = await runLathe(["run", "--format", "json", "--yes", "show the environment"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    // The header really was filled from CORP_AUTH: the config resolved it, so it is a secret Lathe holds.
    assert.strictEqual(server?.requests[0]?.headers["x-corp-auth"], `Bearer ${SECRETS.CORP_AUTH}`)
    const seen = toolResult(server as ScriptedServer)
    assert.include(seen, "EDITOR=vi", `${seen}\n${run.stderr}`)
    for (const value of VALUES) assert.notInclude(seen, value)
  }, 60_000)

  it("lathe doctor names the secret variables (never their values) and warns when commands run unsandboxed", async () => {
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify({ sandbox: "off" }))
    const env = { ...box.env, ...SECRETS }
    const run = await runLathe(["doctor", "--json"], { cwd: box.project, env })
    assert.isTrue(run.stdout.startsWith("{"), `${run.stdout}\n${run.stderr}`)
    const report = JSON.parse(run.stdout) as { checks: Array<{ name: string; detail: string }> }
    const detail = report.checks.find((check) => check.name === "secrets")?.detail ?? ""
    assert.match(detail, /^warning: BACKUP_STORE, CORP_AUTH, DATABASE_URL, GH_PAT in Lathe's environment/)
    assert.include(detail, "/proc/<pid>/environ")
    assert.include(detail, "keep the sandbox on")
    for (const value of VALUES) assert.notInclude(run.stdout, value)
  }, 60_000)
})

const FORMAT_PLUGIN = fileURLToPath(new URL("../../../plugins/format/src/index.ts", import.meta.url))

/**
 * A project with a prettier config and a planted `node_modules/.bin/prettier` that records, in `prettier-ran.txt`,
 * the environment it got and the name of PID 1 (inside bubblewrap's PID namespace that is bwrap itself).
 */
const plantedProject = (project: string) => {
  writeFileSync(join(project, ".prettierrc"), "{}\n")
  mkdirSync(join(project, "node_modules", ".bin"), { recursive: true })
  const prettier = join(project, "node_modules", ".bin", "prettier")
  writeFileSync(
    prettier,
    `#!/bin/sh\n{ echo "pid1=$(cat /proc/1/comm)"; env; } > "${join(project, "prettier-ran.txt")}"\n`
  )
  chmodSync(prettier, 0o755)
  return join(project, "prettier-ran.txt")
}

describe("walls: the format plugin runs the project's programs only when trusted, and then in the sandbox", () => {
  const writeStep: Array<ServerStep> = [{ tool: "write", input: { filePath: "a.ts", content: "const a = {b:1}\n" } }]

  it("untrusted: the planted node_modules/.bin/prettier never runs", async () => {
    const { project, env } = await setup(writeStep, { plugin: [FORMAT_PLUGIN] })
    const marker = plantedProject(project)
    const run = await runLathe(["run", "--format", "json", "--yes", "write a.ts"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isTrue(existsSync(join(project, "a.ts")))
    assert.isFalse(run.events.some((event) => event.type === "plugin.error"))
    assert.isFalse(existsSync(marker))
  }, 60_000)

  it("trusted: it runs inside bubblewrap with no secret in its environment", async () => {
    const { project, env } = await setup(writeStep, { plugin: [FORMAT_PLUGIN] })
    const marker = plantedProject(project)
    assert.strictEqual((await runLathe(["trust"], { cwd: project, env })).code, 0)
    const run = await runLathe(["run", "--format", "json", "--yes", "write a.ts"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isTrue(existsSync(marker), run.stdout + run.stderr)
    const seen = readFileSync(marker, "utf8")
    assert.include(seen, "pid1=bwrap")
    assert.include(seen, "EDITOR=vi")
    for (const value of VALUES) assert.notInclude(seen, value)
  }, 60_000)
})
