/**
 * "Fast again, then faster than anyone": a run pays for no text measuring before its first request. The first Intl
 * object of a process makes V8 build ICU's locale set (~100 M instructions) and string-width builds an
 * `Intl.Segmenter` and a `\p{RGI_Emoji}` regex (~195 M) as it loads; only a live line on a terminal needs them. The
 * real CLI runs with a preload (`fixtures/intl-probe.mjs`) that logs every Intl construction and locale-aware call to
 * a file; the scripted model server reads that file when the first request arrives, while the CLI waits for the reply,
 * so what was logged by then is exactly what start-up did. The model is uncatalogued, so the run also prints the
 * not-in-the-catalogue notice, whose numbers were formatted with `toLocaleString`.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { closeAll, spawnTerminal } from "./pty.js"

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  closeAll()
  for (const server of servers.splice(0)) await server.close()
})

const probe = fileURLToPath(new URL("./fixtures/intl-probe.mjs", import.meta.url))
const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

/** Runs `lathe run` with the probe; returns the probe's log as it stood at the first request, and the run. */
const probedRun = async (args: ReadonlyArray<string>) => {
  const box = sandbox()
  const log = join(box.dir, "intl.log")
  const read = () => (existsSync(log) ? readFileSync(log, "utf8") : "")
  let atFirstRequest: string | undefined
  const server = await startScriptedServer(() => {
    atFirstRequest ??= read()
    return { steps: [{ text: "Done." }] }
  })
  servers.push(server)
  const env = {
    ...box.env,
    LATHE_BASE_URL: server.url,
    LATHE_MODEL: "uncatalogued-startup-model",
    LATHE_TEST_INTL_LOG: log,
    NODE_OPTIONS: `--import ${probe}`
  }
  const run = await runLathe(["run", ...args, "say done"], { cwd: box.project, env, timeoutMs: 60_000 })
  assert.strictEqual(run.code, 0, run.stderr)
  assert.strictEqual(server.requests.length, 1)
  return { atFirstRequest: atFirstRequest ?? "", run }
}

describe("start-up builds no Intl object (end to end)", () => {
  it("--format json: nothing of Intl, string-width or toLocaleString before the first request", async () => {
    const { atFirstRequest, run } = await probedRun(["--format", "json"])
    const notice = run.events.find((event) => event.type === "notice" && event.message.includes("-token context"))
    assert.isDefined(notice, run.stdout)
    assert.match(JSON.stringify(notice), /assumes a \d{1,3}(,\d{3})+-token context/)
    assert.strictEqual(atFirstRequest, "", "Intl used before the first request")
  }, 90_000)

  it("piped text output: the same, the notice's numbers grouped as before", async () => {
    const { atFirstRequest, run } = await probedRun([])
    assert.include(run.stdout, "Done.")
    assert.match(run.stderr, /assumes a \d{1,3}(,\d{3})+-token context, \d{1,3}(,\d{3})+ output tokens/)
    assert.strictEqual(atFirstRequest, "", "Intl used before the first request")
  }, 90_000)

  it("at a terminal: the Markdown renderer and the live line load while the first request is out, not before", {
    timeout: 90_000
  }, async () => {
    const box = sandbox()
    const log = join(box.dir, "intl.log")
    const read = () => (existsSync(log) ? readFileSync(log, "utf8") : "")
    let atFirstRequest: string | undefined
    const server = await startScriptedServer((_request, index) => {
      atFirstRequest ??= read()
      return index === 0
        ? { steps: [{ tool: "bash", input: { command: "sleep 1.5", description: "Wait a moment" } }] }
        : { steps: [{ text: "# Findings\n\nAll **good**.\n" }] }
    })
    servers.push(server)
    const term = spawnTerminal({
      command: process.execPath,
      args: ["--conditions=@lathe/source", "--import", tsx, "--import", probe, bin, "run", "--yes", "look"],
      cwd: box.project,
      env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m", LATHE_TEST_INTL_LOG: log },
      cols: 100,
      rows: 30
    })
    // The live line (string-width, Intl) still shows while the command runs, and the answer is Markdown.
    await term.waitFor(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash Wait a moment · \d+s/, 30_000)
    assert.strictEqual(await term.exited, 0, term.transcript())
    const screen = term.transcript()
    assert.match(screen, /^Findings$/m)
    assert.include(screen, "All good.")
    assert.notInclude(screen, "**")
    assert.strictEqual(atFirstRequest, "", "Intl used before the first request")
    assert.notStrictEqual(read(), "", "the live line measured its text after the first request")
  })

  it("the probe records what it is there to catch", async () => {
    // A run that segments text: the probe must log it, or the tests above prove nothing.
    const box = sandbox()
    const log = join(box.dir, "intl.log")
    const child = spawnSync(
      process.execPath,
      ["--import", probe, "-e", "new Intl.Segmenter(); (1234).toLocaleString('en-US')"],
      { env: { ...box.env, LATHE_TEST_INTL_LOG: log } }
    )
    assert.strictEqual(child.status, 0, String(child.stderr))
    const lines = readFileSync(log, "utf8").trim().split("\n")
    assert.strictEqual(lines.length, 2, lines.join("\n"))
    assert.include(lines[0], "new Intl.Segmenter")
    assert.include(lines[1], "Number.prototype.toLocaleString")
  })
})
