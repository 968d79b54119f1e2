import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { startScriptedServer } from "@lathe/core/testing"
import { assert, describe, it, onTestFinished } from "vitest"
import { INSTALLED_CACHE_DIR } from "../src/code-cache.js"
import { sandbox } from "./helpers.js"
import { closeAll, quit, spawnTerminal } from "./pty.js"

// The bundled CLI (what `./lathe` and the published `lathe` run); Nx builds it before this package's tests.
const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))

const run = (
  args: ReadonlyArray<string>,
  cwd: string,
  env: Record<string, string>,
  nodeArgs: ReadonlyArray<string> = []
) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, bundle, ...args], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
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

describe("the bundled CLI", () => {
  it("exists (build it with `npx nx run @lathe/cli:bundle`)", () => {
    assert.isTrue(existsSync(bundle), `${bundle} is missing: run npx nx run @lathe/cli:bundle`)
  })

  it("starts lathe run from its own CommonJS build, and runs a turn without loading undici", async () => {
    const main = readdirSync(dirname(bundle)).filter((file) => file.endsWith(".js"))
    assert.isTrue(
      main.some((file) => readFileSync(join(dirname(bundle), file), "utf8").includes("run/run.cjs")),
      "the main build loads dist/bundle/run/run.cjs"
    )
    assert.isTrue(existsSync(join(dirname(bundle), "run", "run.cjs")))
    // An ES import of node:http evaluates every export of its ES facade, undici's lazy WebSocket among them: ~35 ms
    // of every `lathe run` start for a server most runs never open (the MCP OAuth callback takes it when needed).
    const box = sandbox()
    const record = join(box.dir, "loaded.txt")
    const hook = join(box.dir, "record.mjs")
    // What Node had loaded at exit, and (for a turn) when the first model request left.
    writeFileSync(
      hook,
      'import { writeFileSync } from "node:fs"\n' +
        'import { subscribe } from "node:diagnostics_channel"\n' +
        "let first\n" +
        'subscribe("http.client.request.start", () => { first ??= process.moduleLoadList.join("\\n") })\n' +
        'process.on("exit", () => {\n' +
        '  writeFileSync(process.env.RECORD_TO, process.moduleLoadList.join("\\n"))\n' +
        '  if (first) writeFileSync(process.env.RECORD_TO + ".first", first)\n' +
        "})\n"
    )
    const help = await run(["run", "--help"], box.project, { ...box.env, RECORD_TO: record }, ["--import", hook])
    assert.strictEqual(help.code, 0, help.stderr)
    assert.include(help.stdout, "Usage: lathe run")
    const loaded = readFileSync(record, "utf8")
    assert.include(loaded, "NativeModule fs", "the list was recorded")
    assert.notInclude(loaded, "internal/deps/undici/undici")
    // Nor does a turn with a tool call: the providers send through node:http, and the bundle's AI SDK builds its
    // request headers without undici's Headers (~15 ms of the first request otherwise).
    writeFileSync(join(box.project, "a.txt"), "alpha\n")
    const git = (...args: Array<string>) =>
      execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: box.project })
    // First a folder outside git (its project id is a SHA-1 of its path), then a repository (its first commit).
    for (const where of ["outside git", "a repository"]) {
      if (where === "a repository") {
        git("init", "-q")
        git("add", "-A")
        git("commit", "-qm", "init")
      }
      const server = await startScriptedServer([
        { steps: [{ tool: "read", input: { filePath: "a.txt" } }] },
        { steps: [{ text: "done" }] }
      ])
      try {
        const env = { ...box.env, RECORD_TO: record, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
        const turn = await run(["run", "--yes", "read a.txt"], box.project, env, ["--import", hook])
        assert.strictEqual(turn.code, 0, turn.stderr)
        assert.include(turn.stdout, "done")
        assert.strictEqual(server.requests.length, 2)
      } finally {
        await server.close()
      }
      assert.include(readFileSync(record, "utf8"), "NativeModule http", where)
      assert.notInclude(readFileSync(record, "utf8"), "internal/deps/undici/undici", where)
      // Nor node:crypto (~5 ms) before the first request: ids take Math.random, the code cache's name FNV-1a, a
      // folder's project id a SHA-1 in plain JavaScript; the first permission ask's id loads it.
      const beforeRequest = readFileSync(`${record}.first`, "utf8")
      assert.include(beforeRequest, "NativeModule http", where)
      assert.notInclude(beforeRequest, "NativeModule crypto", where)
    }
  })

  it("marks its way to the first request with LATHE_STARTUP_MARKS=1 (bench/startup-phases.ts), and says nothing without", async () => {
    const box = sandbox()
    const server = await startScriptedServer([{ steps: [{ text: "one" }] }, { steps: [{ text: "two" }] }])
    try {
      const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
      const marked = await run(["run", "hi"], box.project, { ...env, LATHE_STARTUP_MARKS: "1" })
      assert.strictEqual(marked.code, 0, marked.stderr)
      const marks = [...marked.stderr.matchAll(/^lathe-mark (.+) ([\d.]+)$/gm)].map(([, name, ms]) => ({
        name,
        ms: Number(ms)
      }))
      const order = ["launch", "run.cjs compiled", "run start", "app plugins", "step request", "request"]
      const at = order.map((name) => marks.findIndex((mark) => mark.name === name))
      assert.notInclude(at, -1, `marks: ${marks.map((mark) => mark.name).join(", ")}`)
      assert.deepStrictEqual(
        at,
        [...at].sort((a, b) => a - b),
        "in the order start-up goes"
      )
      assert.isTrue(marks.every((mark, i) => i === 0 || mark.ms >= (marks[i - 1]?.ms ?? 0)))
      assert.strictEqual(marks.filter((mark) => mark.name === "request").length, 1, "the first request, once")
      const quiet = await run(["run", "hi"], box.project, env)
      assert.strictEqual(quiet.code, 0, quiet.stderr)
      assert.notInclude(quiet.stderr, "lathe-mark")
    } finally {
      await server.close()
    }
  })

  it("keeps a V8 code cache of the run build: written after the first finished run, then used as it is", async () => {
    // An install's cache beside the build (bin/warm-cache.js; the speed guard writes one into this checkout's bundle)
    // would be read instead, and this run would write none: this is the first run of an install that ran no scripts.
    rmSync(join(dirname(bundle), "run", INSTALLED_CACHE_DIR), { recursive: true, force: true })
    const box = sandbox()
    const cacheDir = join(box.dir, "code-cache")
    const server = await startScriptedServer([
      { steps: [{ text: "one" }] },
      { steps: [{ text: "two" }] },
      { steps: [{ text: "three" }] }
    ])
    try {
      const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m", LATHE_CODE_CACHE: cacheDir }
      assert.strictEqual((await run(["run", "--help"], box.project, env)).code, 0)
      assert.isFalse(existsSync(cacheDir), "help text leaves no cache")
      assert.strictEqual((await run(["run", "hi"], box.project, env)).code, 0)
      const [name] = readdirSync(cacheDir)
      assert.match(name ?? "", /^run\.cjs-[0-9a-f]{8}-[0-9a-f]{16}\.v8cache$/)
      const file = join(cacheDir, name ?? "")
      const written = readFileSync(file)
      assert.isAbove(written.byteLength, 100_000, "the cache holds the functions the run compiled")
      const second = await run(["run", "again"], box.project, env)
      assert.strictEqual(second.code, 0, second.stderr)
      assert.isTrue(readFileSync(file).equals(written), "an accepted cache is not written again")
      // A cache V8 rejects (corrupt, or from another Node) costs nothing but a recompile, and is replaced; the cache
      // of an earlier build at the same path goes when a new one is written, another installed copy's stays.
      writeFileSync(file, "not a code cache")
      const here = (name ?? "").slice(0, "run.cjs-".length + 9)
      const earlier = join(cacheDir, `${here}0123456789abcdef.v8cache`)
      writeFileSync(earlier, "an earlier build's cache")
      const elsewhere = join(cacheDir, "run.cjs-00000000-0123456789abcdef.v8cache")
      writeFileSync(elsewhere, "another copy's cache")
      const third = await run(["run", "once more"], box.project, env)
      assert.strictEqual(third.code, 0, third.stderr)
      assert.include(third.stdout, "three")
      assert.isAbove(readFileSync(file).byteLength, 100_000)
      assert.isFalse(existsSync(earlier))
      assert.isTrue(existsSync(elsewhere))
    } finally {
      await server.close()
    }
  })

  it("prints its version and runs a tool session end to end (tool descriptions inlined, grammar external)", async () => {
    const box = sandbox()
    const version = await run(["--version"], box.project, box.env)
    // From this checkout: the package's version and the commit ("0.1.0 (a1b2c3d)").
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: dirname(bundle), encoding: "utf8" })
    assert.strictEqual(
      version.stdout,
      `${JSON.parse(readFileSync(join(dirname(bundle), "../../package.json"), "utf8")).version} (${commit.trim()})\n`
    )
    writeFileSync(join(box.project, "a.txt"), "alpha\n")
    const server = await startScriptedServer([
      { steps: [{ tool: "read", input: { filePath: "a.txt" } }] },
      {
        steps: [{ tool: "bash", input: { command: "echo from-bash && git --version >/dev/null", description: "echo" } }]
      },
      { steps: [{ text: "done" }] }
    ])
    try {
      const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
      const result = await run(["run", "--format", "json", "--yes", "go"], box.project, env)
      assert.strictEqual(result.code, 0, result.stderr)
      assert.include(result.stdout, '"type":"tool.completed"')
      assert.include(result.stdout, "alpha")
      assert.include(result.stdout, "from-bash")
      // The tools' long descriptions reached the model.
      const tools = JSON.stringify((server.requests[0]?.body as { tools?: unknown } | undefined)?.tools)
      assert.include(tools, "read")
      assert.isAbove(tools.length, 2_000)
    } finally {
      await server.close()
    }
  })

  it("keeps the catalogue, unused AI SDK code and zod's other locales out of the run build; Markdown at a terminal as before", async () => {
    const dir = dirname(bundle)
    const runBuild = readFileSync(join(dir, "run", "run.cjs"), "utf8")
    // The shipped catalogue: a line of JSON with each provider's models as [offset, length] of the JSON text after it.
    const catalogue = readFileSync(join(dir, "models-catalog.dat"))
    const start = catalogue.indexOf(10) + 1
    const providers = JSON.parse(catalogue.toString("utf8", 0, start)).providers as Record<
      string,
      { models: [number, number] }
    >
    const [offset, length] = providers.anthropic?.models ?? [0, 0]
    const anthropic = JSON.parse(catalogue.toString("utf8", start + offset, start + offset + length))
    const [modelID, row] = Object.entries(anthropic as Record<string, [string]>)[0] ?? ["", [""]]
    assert.isNotEmpty(modelID, "the shipped catalogue has Anthropic's models")
    // Each would be read and deserialised by every run: the catalogue (~550 KiB); the parts of `ai` Lathe does not
    // use (~330 KiB), whose module bodies every run evaluated too.
    assert.notInclude(runBuild, row[0], "the run build reads the catalogue from models-catalog.dat")
    assert.notInclude(runBuild, "x-vercel-ai-ui-message-stream", "the run build keeps only what it uses of ai")
    // zod's messages in English only: its other locales (~260 KiB, 14 % of the run build) are left out.
    assert.notInclude(runBuild, "erwartet", "zod's German messages are not in the run build")
    assert.include(runBuild, "expected", "zod's English messages are")

    const box = sandbox()
    // The main build reads the catalogue beside it too.
    const models = await run(["models", "anthropic"], box.project, box.env)
    assert.strictEqual(models.code, 0, models.stderr)
    assert.include(models.stdout, `${modelID} `)
    assert.include(models.stdout, row[0])
    const server = await startScriptedServer(() => ({ steps: [{ text: "# Title\n\nSome **bold** text.\n" }] }))
    try {
      // A catalogued model: the run finds it (no unknown-model notice), and at a terminal the answer is Markdown.
      const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: modelID, TERM: "xterm" }
      const cli = [process.execPath, bundle, "run", "--yes", "hi"].map((arg) => `'${arg}'`).join(" ")
      const terminal = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
        const child = spawn("script", ["-qec", cli, "/dev/null"], { cwd: box.project, env, stdio: "pipe" })
        let output = ""
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString("utf8")
        })
        child.on("error", reject)
        child.on("close", (code) => resolve({ code, output }))
      })
      assert.strictEqual(terminal.code, 0, terminal.output)
      assert.notInclude(terminal.output, "not in Lathe's model catalogue")
      assert.include(terminal.output, "\x1b[1m\x1b[4m\x1b[35mTitle")
      assert.notInclude(terminal.output, "# Title")
      assert.include(terminal.output, "Some \x1b[1mbold\x1b[22m text.")
    } finally {
      await server.close()
    }
  })

  it("keeps packages a plain run never evaluates in side files of the run build, loaded when first used", async () => {
    const runDir = join(dirname(bundle), "run")
    const runBuild = readFileSync(join(runDir, "run.cjs"), "utf8")
    // Without a code cache (the first run after an install) V8 compiles all of run.cjs: these are not in it.
    const sides = ["turndown", "html-to-text", "markdown", "yaml"].map((name) => join(runDir, `vendor-${name}.cjs`))
    for (const side of sides) assert.isTrue(existsSync(side), `${side} is missing`)
    assert.notInclude(runBuild, "is not a string, or an element/document/fragment node", "turndown is a side file")
    assert.notInclude(runBuild, "Implicit map keys need to be followed by map values", "yaml is a side file")
    // The web fetch tool's converters, as the run build takes them (each package as `m0` of its side file).
    const load = createRequire(join(runDir, "run.cjs"))
    const turndown = load("./vendor-turndown.cjs").m0 as { default: new () => { turndown: (html: string) => string } }
    assert.strictEqual(new turndown.default().turndown("<p>Some <strong>bold</strong> text</p>"), "Some **bold** text")
    const htmlToText = load("./vendor-html-to-text.cjs").m0 as { convert: (html: string) => string }
    assert.strictEqual(htmlToText.convert("<p>Hello <b>there</b></p>"), "Hello there")
    // A plain run requires none of them; a command file's front matter goes through yaml, from its side file.
    const box = sandbox()
    const required = join(box.dir, "required.txt")
    const hook = join(box.dir, "record.cjs")
    writeFileSync(
      hook,
      'const Module = require("node:module")\n' +
        "const load = Module._load\n" +
        "Module._load = function (request, ...rest) {\n" +
        '  if (/vendor-/.test(request)) require("node:fs").appendFileSync(process.env.RECORD_TO, request + "\\n")\n' +
        "  return load.call(this, request, ...rest)\n" +
        "}\n"
    )
    const recorded = () => (existsSync(required) ? readFileSync(required, "utf8") : "")
    mkdirSync(join(box.project, ".lathe", "commands"), { recursive: true })
    writeFileSync(
      join(box.project, ".lathe", "commands", "ship.md"),
      "---\ndescription: Ship it\n---\nShip COMMAND-BODY-77c2 now.\n"
    )
    const server = await startScriptedServer([{ steps: [{ text: "plain" }] }, { steps: [{ text: "shipped" }] }])
    try {
      const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m", RECORD_TO: required }
      const plain = await run(["run", "--format", "json", "hi"], box.project, env, ["--require", hook])
      assert.strictEqual(plain.code, 0, plain.stderr)
      assert.strictEqual(recorded(), "", "a plain run requires no side file")
      const result = await run(["run", "--format", "json", "--command", "ship"], box.project, env, ["--require", hook])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.include(recorded(), "./vendor-yaml.cjs")
      assert.include(JSON.stringify(server.requests[1]?.body), "COMMAND-BODY-77c2")
      assert.notInclude(JSON.stringify(server.requests[1]?.body), "description: Ship it")
    } finally {
      await server.close()
    }
  })

  it("loads a TypeScript plugin natively (no tsx), sharing its own @lathe/plugin, @lathe/core and zod with it", async () => {
    const box = sandbox()
    const plugins = join(box.dir, "config", "lathe", "plugins")
    mkdirSync(plugins, { recursive: true })
    writeFileSync(
      join(plugins, "marker.ts"),
      `import { definePlugin, Tool } from "@lathe/plugin"
import { z } from "zod"
const mark: string = "TS-PLUGIN-MARK"
export default definePlugin({
  name: "marker",
  setup: async () => ({
    "system.transform": async (_input, output) => { output.system.push(mark) },
    tools: [Tool.define("mark", { description: "marks", parameters: z.object({}), mutates: false, execute: async () => ({ title: "mark", output: mark }) })]
  })
})
`
    )
    // A plugin written before the kit: its names from "@lathe/core" (the run build shares that namespace only once a
    // plugin file is imported).
    writeFileSync(
      join(plugins, "older.mjs"),
      `import { definePlugin, groupDigits } from "@lathe/core"
export default definePlugin({
  name: "older",
  setup: async () => ({ "system.transform": async (_input, output) => { output.system.push("OLDER-" + groupDigits(1234567)) } })
})
`
    )
    const server = await startScriptedServer([{ steps: [{ tool: "mark", input: {} }] }, { steps: [{ text: "ok" }] }])
    try {
      const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
      const result = await run(["run", "--format", "json", "mark it"], box.project, env)
      assert.strictEqual(result.code, 0, result.stderr)
      assert.include(JSON.stringify(server.requests[0]?.body), "TS-PLUGIN-MARK")
      assert.include(JSON.stringify(server.requests[0]?.body), "OLDER-1,234,567")
      assert.include(result.stdout, '"tool":"mark"')
    } finally {
      await server.close()
    }
  })

  it("opens the interactive session in a terminal, answers a prompt and quits", { timeout: 60_000 }, async () => {
    const server = await startScriptedServer((request) => ({
      steps: [{ text: JSON.stringify(request.body).includes("Write a title") ? "A title" : "Bundled hello." }]
    }))
    onTestFinished(async () => {
      await closeAll()
      await server.close()
    })
    const box = sandbox()
    const term = spawnTerminal({
      command: process.execPath,
      args: [bundle],
      cwd: box.project,
      env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
    })
    await term.waitFor("ready", 30_000)
    await term.type("hi")
    term.press("enter")
    await term.waitFor("Bundled hello.")
    assert.strictEqual(await quit(term), 0)
  })
})
