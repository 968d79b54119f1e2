import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, assert, describe, it, onTestFinished } from "vitest"
import { closeAll, spawnTerminal, type Terminal } from "./pty.js"

const fixture = fileURLToPath(new URL("fixtures/ink-echo.mjs", import.meta.url))
const cwd = fileURLToPath(new URL("..", import.meta.url))

// What CI sets, so every test also proves the harness strips it (Ink's is-in-ci would otherwise turn input off).
const ciEnv: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? tmpdir(),
  CI: "true",
  CONTINUOUS_INTEGRATION: "1",
  GITHUB_ACTIONS: "true",
  CI_JOB_ID: "7"
}

const node = (
  args: ReadonlyArray<string>,
  options: { env?: Record<string, string>; cols?: number; rows?: number } = {}
) => spawnTerminal({ command: process.execPath, args, cwd, env: options.env ?? ciEnv, ...options })

/** Drives the ink-echo fixture through typing, a resize, a paste and a double ctrl-c. */
const driveEcho = async (terminal: Terminal) => {
  await terminal.waitFor("ready")
  await terminal.waitFor("size 80x24")
  await terminal.type("hello")
  await terminal.waitFor("typed: hello")
  terminal.resize(100, 30)
  await terminal.waitFor("size 100x30")
  assert.strictEqual(terminal.screen().split("\n").length, 30)
  terminal.paste("first line\nsecond line\nthird")
  await terminal.waitFor("pastes: 1 lines: 3")
  assert.include(terminal.screen(), "pasted: first line|second line|third")
  // The paste did not leak into the typed text.
  assert.include(terminal.screen(), "typed: hello\n")
  terminal.press("ctrl-c")
  await terminal.waitFor("press ctrl-c again")
  terminal.press("ctrl-c")
  assert.strictEqual(await terminal.exited, 0, terminal.transcript())
  // Ink left the alternate screen: the normal screen, empty here, is back.
  await terminal.waitForGone("ready")
}

describe("the pty harness", () => {
  afterEach(closeAll)

  it("runs an Ink app from source: typing, resize, bracketed paste and exit, with CI set outside", async () => {
    await driveEcho(node([fixture]))
  })

  it("gives the program a clean interactive environment: no CI markers, TERM=xterm-256color unless overridden", async () => {
    const print = ["-e", "const e = process.env; console.log([e.TERM, e.CI, e.GITHUB_ACTIONS, e.CI_JOB_ID].join(','))"]
    const defaults = node(print)
    assert.strictEqual(await defaults.exited, 0)
    await defaults.waitFor("xterm-256color,,,")
    const overridden = node(print, { env: { ...ciEnv, TERM: "dumb" } })
    assert.strictEqual(await overridden.exited, 0)
    await overridden.waitFor("dumb,,,")
  })

  it("reports the screen when waitFor times out", async () => {
    const terminal = node([fixture])
    await terminal.waitFor("ready")
    const error = await terminal.waitFor("never shown", 200).then(
      () => undefined,
      (cause: unknown) => cause
    )
    assert.instanceOf(error, Error)
    assert.include((error as Error).message, 'waiting for "never shown"')
    assert.include((error as Error).message, "ready\nsize 80x24")
    terminal.press("enter")
    await terminal.waitFor("typed: ⏎")
    const gone = await terminal.waitForGone(/ready/, 200).then(
      () => undefined,
      (cause: unknown) => cause
    )
    assert.include(String(gone), "/ready/ to disappear")
  })

  it("kill() ends the whole process tree", async () => {
    // The grandchild ignores SIGHUP, so only a kill of the whole process group (not the pty closing) ends it.
    const terminal = spawnTerminal({
      command: "/bin/sh",
      args: ["-c", 'trap "" HUP; sleep 30 & echo "child=$!"; wait'],
      cwd,
      env: ciEnv
    })
    await terminal.waitFor(/child=\d+/)
    const pid = Number(/child=(\d+)/.exec(terminal.screen())?.[1])
    terminal.kill()
    assert.strictEqual(await terminal.exited, 128 + 9)
    // The grandchild got the SIGKILL too: gone, or a zombie waiting for init to reap it (Linux /proc).
    const alive = () => {
      try {
        return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z"
      } catch {
        return false
      }
    }
    for (let i = 0; i < 50 && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 20))
    assert.isFalse(alive(), `sleep (pid ${pid}) survived kill()`)
  })
})

/** The shape of `scripts/bundle.mjs`'s export (a plain .mjs script, so typed here). */
interface BundleScript {
  readonly bundleOptions: (options: { entryPoints: Record<string, string>; outdir: string }) => object
}

describe("the CLI bundle carries Ink", () => {
  afterEach(closeAll)

  it("bundles a lazily imported Ink app with the CLI's esbuild options, and the bundle runs in the pty", async () => {
    const { build } = await import("esbuild")
    const script = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))
    const { bundleOptions } = (await import(script)) as BundleScript
    const dir = mkdtempSync(join(tmpdir(), "lathe-ink-bundle-"))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const entry = join(dir, "entry.mjs")
    // Like the CLI's interactive command: the UI is a dynamic import, so it becomes its own chunks.
    writeFileSync(entry, `await import(${JSON.stringify(fixture)})\n`)
    const outdir = join(dir, "out")
    const result = await build({ ...bundleOptions({ entryPoints: { entry }, outdir }), logLevel: "silent" })
    const inputs = Object.keys(result.metafile?.inputs ?? {})
    assert.isTrue(
      inputs.some((input) => input.includes("react.production")),
      "React's production build is bundled"
    )
    assert.isFalse(
      inputs.some((input) => input.includes("development")),
      "no development build of React is bundled"
    )
    assert.isFalse(
      inputs.some((input) => input.includes("react-devtools-core")),
      "react-devtools-core stays out"
    )
    assert.isTrue(inputs.some((input) => input.includes("yoga-layout")))
    const outputs = Object.keys(result.metafile?.outputs ?? {})
    assert.isFalse(
      outputs.some((output) => output.endsWith(".wasm")),
      "yoga's wasm is inlined"
    )
    assert.isAbove(outputs.filter((output) => output.endsWith(".js")).length, 1, "the Ink app is a separate chunk")

    await driveEcho(node([join(outdir, "entry.js")]))
  })
})
