import { spawn } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { createLatheClient } from "@lathe/sdk"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { startServe } from "./serve-helpers.js"

// What reaches the person's terminal besides Lathe's own output: no Node warnings about Lathe's own use of
// experimental APIs, each plugin failure once, a plugin's prints on stderr (never in stdout's JSON events), and no
// empty session left by a failed `run --attach`.
const cleanups: Array<() => Promise<unknown> | undefined> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const scripted = async (replies: number) => {
  const server: ScriptedServer = await startScriptedServer(
    Array.from({ length: replies }, () => ({ steps: [{ text: "Fine." }] }))
  )
  cleanups.push(() => server.close())
  return server
}

/** Runs `node args…` and collects its output. */
const node = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

// A plugin that prints on load, in setup and in a hook, by console.log and by process.stdout.write.
const chatty = `console.log("chatty: loading")
export default {
  name: "chatty",
  setup: async () => {
    console.log("chatty: setup")
    return {
      "system.transform": async (_input, output) => {
        console.log("chatty: in a hook", { n: 1 })
        process.stdout.write("chatty: raw write\\n")
        output.system.push("CHATTY")
      }
    }
  }
}
`
const broken = `export default { name: "broken", setup: async () => { throw new Error("kaboom at setup") } }\n`

/** A home whose global plugins are the chatty and the broken one (global plugins load without trust). */
const withPlugins = (env: Record<string, string>, dir: string) => {
  const plugins = join(dir, "config", "lathe", "plugins")
  mkdirSync(plugins, { recursive: true })
  writeFileSync(join(plugins, "chatty.mjs"), chatty)
  writeFileSync(join(plugins, "broken.mjs"), broken)
  return { env, plugins }
}

const count = (text: string, part: string) => text.split(part).length - 1

describe("no Node ExperimentalWarning", () => {
  const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))

  it("the bundled lathe prints none, though the vm loader it uses makes plain Node print one", async () => {
    const box = sandbox()
    // Without Lathe: the loader the bundle runs under, with an import() as a plugin file causes, prints the warning.
    const plain = await node(
      [
        "--input-type=module",
        "-e",
        'import vm from "node:vm"\n' +
          "await new vm.Script('import(\"node:path\")', { importModuleDynamically: " +
          "vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER }).runInThisContext()"
      ],
      box.project,
      box.env
    )
    assert.include(plain.stderr, "ExperimentalWarning: vm.USE_MAIN_CONTEXT_DEFAULT_LOADER")

    assert.isTrue(existsSync(bundle), `${bundle} is missing: run npx nx run @lathe/cli:bundle`)
    const server = await scripted(1)
    const { env } = withPlugins({ ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }, box.dir)
    const commands = [
      ["--version"],
      ["--help"],
      ["run", "hello"],
      ["session", "list"],
      ["agents"],
      ["plugin", "list"],
      ["config"],
      ["undo"]
    ]
    for (const args of commands) {
      const run = await node([bundle, ...args], box.project, env)
      assert.notInclude(run.stderr, "ExperimentalWarning", `lathe ${args.join(" ")}`)
      assert.notInclude(run.stderr, "(node:", `lathe ${args.join(" ")}`)
    }
    assert.strictEqual(server.requests.length, 1, "the run reached the model (and so loaded the plugin files)")
  })
})

describe("plugins' output", () => {
  it("a plugin's console.log and stdout writes go to stderr: every stdout line of --format json is an event", async () => {
    const box = sandbox()
    // Without Lathe: the plugin's prints land on stdout.
    writeFileSync(join(box.dir, "load.mjs"), chatty)
    const plain = await node([join(box.dir, "load.mjs")], box.project, box.env)
    assert.include(plain.stdout, "chatty: loading")

    const server = await scripted(1)
    const { env } = withPlugins({ ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }, box.dir)
    const run = await runLathe(["run", "--format", "json", "hello"], { cwd: box.project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(JSON.stringify(server.requests[0]?.body), "CHATTY", "the hook ran")
    const lines = run.stdout.split("\n").filter((line) => line !== "")
    assert.isAbove(lines.length, 5)
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), undefined, undefined, line)
    for (const said of ["chatty: loading", "chatty: setup", "chatty: in a hook", "chatty: raw write"])
      assert.include(run.stderr, said)
    // The broken plugin: once as the event on stdout, for the program reading it, and once on stderr, for the person.
    assert.strictEqual(run.events.filter((e) => e.type === "plugin.error").length, 1)
    assert.strictEqual(count(run.stderr, "kaboom at setup"), 1, run.stderr)
  })

  it("in text mode stdout is only the answer, and a plugin that fails to load is reported once", async () => {
    const box = sandbox()
    const server = await scripted(1)
    const { env } = withPlugins({ ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }, box.dir)
    const run = await runLathe(["run", "hello"], { cwd: box.project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(run.stdout, "Fine.\n")
    assert.strictEqual(count(run.stderr, 'Plugin "broken" failed in load: kaboom at setup'), 1, run.stderr)
  })
})

describe("lathe run --attach", () => {
  it("removes the session it made when the prompt fails before anything is stored", async () => {
    const box = sandbox()
    const server = await scripted(1)
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const serve = await startServe(["--port", "0", "--token", "quiet-token"], { cwd: box.project, env })
    cleanups.push(async () => {
      serve.child.kill("SIGTERM")
      await serve.exited
    })
    const run = await runLathe(["run", "--attach", serve.url, "--format", "json", "-m", "nowhere/none", "hi"], {
      cwd: box.project,
      env: { ...env, LATHE_SERVER_TOKEN: "quiet-token" }
    })
    assert.strictEqual(run.code, 1)
    // The run did make a session (its creation was rendered), then the prompt was refused.
    assert.isTrue(run.events.some((e) => e.type === "session.created"))
    assert.match(run.stderr, /nowhere/)
    const client = createLatheClient({ baseUrl: serve.url, token: "quiet-token" })
    assert.deepStrictEqual(await client.sessions.list({}), [])
    assert.strictEqual(server.requests.length, 0)
  })
})
