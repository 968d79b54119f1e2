import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { installTestServers } from "@lathe/lsp/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// `lathe run` with the real typescript-language-server and pyright (installed from the npm registry by the test, put
// on PATH): the diagnostics of an edit reach the model's next request; a missing server is one notice.
const servers = installTestServers()
const skip = "skip" in servers ? servers.skip : undefined
if (skip) console.warn(`lathe lsp e2e skipped: ${skip}`)

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** A sandbox whose PATH has the test's language servers (and node, which they run on). */
const lspSandbox = (globalConfig?: Record<string, unknown>) => {
  const box = sandbox()
  const bin = "bin" in servers ? servers.bin : ""
  const env = { ...box.env, PATH: `${bin}:${dirname(process.execPath)}:${box.env.PATH}` }
  if (globalConfig) {
    mkdirSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe"), { recursive: true })
    writeFileSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe", "lathe.json"), JSON.stringify(globalConfig))
  }
  return { ...box, env }
}

/** The text of request `index`'s messages, as the model received them. */
const sent = (index: number): string =>
  JSON.stringify((server?.requests[index]?.body as { messages?: unknown })?.messages)

/** Writes `file` broken, reads it, writes it fixed, then ends: four model requests. */
const breakAndFix = async (file: string, broken: string, fixed: string, files: Record<string, string> = {}) => {
  server = await startScriptedServer([
    { steps: [{ tool: "write", input: { filePath: file, content: broken } }] },
    { steps: [{ tool: "read", input: { filePath: file } }] },
    { steps: [{ tool: "write", input: { filePath: file, content: fixed } }] },
    { steps: [{ text: "Done." }] }
  ])
  const box = lspSandbox()
  for (const [name, text] of Object.entries(files)) writeFileSync(join(box.project, name), text)
  const run = await runLathe(["run", "--format", "json", "--yes", `fix ${file}`], {
    cwd: box.project,
    env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" },
    timeoutMs: 90_000
  })
  assert.strictEqual(run.code, 0, run.stderr)
  assert.strictEqual(server.requests.length, 4)
  assert.strictEqual(readFileSync(join(box.project, file), "utf8"), fixed)
  return box
}

describe.skipIf(skip)("lathe run with language servers", () => {
  it("a TypeScript type error reaches the next request with its line; the fix brings none", async () => {
    await breakAndFix("a.ts", 'export const a = 1\nexport const b: number = "two"\n', "export const a = 1\n", {
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true } })
    })
    assert.include(sent(1), "Language server diagnostics (fix these errors):")
    assert.match(sent(1), /a\.ts:\\n {2}2:14 error TS2322: Type 'string' is not assignable to type 'number'/)
    // The last request holds both results: the diagnostics once (the first write's), none after the fix.
    assert.strictEqual(sent(3).split("TS2322").length - 1, 1)
  }, 120_000)

  it("a pyright error reaches the next request with its line; the fix brings none", async () => {
    await breakAndFix("main.py", 'x = 1\ny: int = "two"\n', "x = 1\ny: int = 2\n")
    assert.match(sent(1), /main\.py:\\n {2}2:10 error/)
    assert.include(sent(1), "is not assignable to declared type")
    assert.strictEqual(sent(3).split("is not assignable to declared type").length - 1, 1)
  }, 120_000)

  it("lathe lsp status names the servers and where they were found", async () => {
    const box = lspSandbox()
    const run = await runLathe(["lsp", "status"], { cwd: box.project, env: box.env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.match(run.stdout, /typescript\s+\.ts .*typescript-language-server \(path\)/)
    assert.match(run.stdout, /pyright\s+\.py \.pyi.*pyright-langserver \(path\)/)
    assert.include(run.stdout, "Nothing runs now")
  })
})

describe("lathe run with a missing language server", () => {
  it("gives one notice, and the edits succeed", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "write", input: { filePath: "a.foo", content: "one\n" } }] },
      { steps: [{ tool: "write", input: { filePath: "b.foo", content: "two\n" } }] },
      { steps: [{ text: "Done." }] }
    ])
    const box = lspSandbox({ lsp: { foo: { command: ["lathe-no-such-language-server"], extensions: [".foo"] } } })
    const run = await runLathe(["run", "--format", "json", "--yes", "write them"], {
      cwd: box.project,
      env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(readFileSync(join(box.project, "a.foo"), "utf8"), "one\n")
    assert.strictEqual(readFileSync(join(box.project, "b.foo"), "utf8"), "two\n")
    const notice = "The foo language server (lathe-no-such-language-server) was not found on PATH."
    assert.strictEqual(sent(2).split(notice).length - 1, 1)
  })
})
