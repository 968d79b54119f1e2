import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { startScriptedServer } from "@lathe/core/testing"
import { assert, describe, it, onTestFinished } from "vitest"
import { sandbox } from "./helpers.js"
import { closeAll, quit, spawnTerminal } from "./pty.js"

// The bundled CLI (what `./lathe` and the published `lathe` run); Nx builds it before this package's tests.
const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))

const run = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
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

  it("starts lathe run from a build of its own whose start-up imports neither node:http nor node:https", () => {
    // An ES import of node:http evaluates every export of its ES facade, undici's lazy WebSocket among them: ~35 ms
    // of every `lathe run` start for a server most runs never open (the MCP OAuth callback takes it when needed).
    const dir = join(dirname(bundle), "run")
    const main = readdirSync(dirname(bundle)).filter((file) => /^main-.*\.js$/.test(file))
    assert.lengthOf(main, 1)
    assert.include(readFileSync(join(dirname(bundle), main[0] ?? ""), "utf8"), "./run/run.js")
    const seen = new Set<string>()
    const builtins = new Set<string>()
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      const code = readFileSync(join(dir, file), "utf8")
      // Static imports only (`import … from "x"`, `import "x"`); `import("x")` loads later, when it is called.
      for (const match of code.matchAll(/(?:^|[;}\s])import\s*(?:[\w$*{},\s]+?\s*from\s*)?"([^"]+)"/g)) {
        const spec = match[1] ?? ""
        if (spec.startsWith("./")) visit(spec.slice(2))
        else if (spec.startsWith("node:")) builtins.add(spec)
      }
    }
    visit("run.js")
    assert.isAbove(seen.size, 3, "the walk found the run build's chunks")
    assert.include([...builtins], "node:fs", "the walk sees built-in imports")
    assert.notInclude([...builtins], "node:http")
    assert.notInclude([...builtins], "node:https")
  })

  it("prints its version and runs a tool session end to end (tool descriptions inlined, grammar external)", async () => {
    const box = sandbox()
    const version = await run(["--version"], box.project, box.env)
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/)
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

  it("loads a TypeScript plugin natively (no tsx), sharing its own @lathe/core and zod with it", async () => {
    const box = sandbox()
    const plugins = join(box.dir, "config", "lathe", "plugins")
    mkdirSync(plugins, { recursive: true })
    writeFileSync(
      join(plugins, "marker.ts"),
      `import { definePlugin, Tool } from "@lathe/core"
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
    const server = await startScriptedServer([{ steps: [{ tool: "mark", input: {} }] }, { steps: [{ text: "ok" }] }])
    try {
      const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
      const result = await run(["run", "--format", "json", "mark it"], box.project, env)
      assert.strictEqual(result.code, 0, result.stderr)
      assert.include(JSON.stringify(server.requests[0]?.body), "TS-PLUGIN-MARK")
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
