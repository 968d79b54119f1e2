import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { parse } from "jsonc-parser"
import { assert, describe, it } from "vitest"
import { mcpCommand } from "../src/commands/mcp.js"
import { runLathe, sandbox } from "./helpers.js"

// End to end: the real CLI process edits the user's config under a temp XDG_CONFIG_HOME; `lathe mcp list` then
// starts what was added (server-everything over stdio from node_modules).
const require = createRequire(import.meta.url)
const everything = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js"
)

const setup = () => {
  const box = sandbox()
  const configDir = join(box.env.XDG_CONFIG_HOME ?? "", "lathe")
  return { ...box, configDir }
}

const lathe = (args: ReadonlyArray<string>, box: ReturnType<typeof setup>) =>
  runLathe(args, { cwd: box.project, env: box.env, timeoutMs: 60_000 })

describe("lathe mcp add|remove (end to end)", () => {
  it("adds a local server to a new user lathe.json, and lathe mcp list starts it", async () => {
    const box = setup()
    const add = await lathe(
      ["mcp", "add", "everything", "--env", "A=1", "--", process.execPath, everything, "stdio"],
      box
    )
    assert.strictEqual(add.code, 0, add.stderr)
    const file = join(box.configDir, "lathe.json")
    assert.match(add.stdout, /Added the MCP server "everything" to .*lathe\.json/)
    assert.deepStrictEqual(JSON.parse(readFileSync(file, "utf8")), {
      mcp: { everything: { type: "local", command: [process.execPath, everything, "stdio"], env: { A: "1" } } }
    })
    const list = await lathe(["mcp", "list", "--json"], box)
    assert.strictEqual(list.code, 0, list.stderr)
    const rows = (JSON.parse(list.stdout) as { servers: Array<{ name: string; state: string }> }).servers
    assert.deepStrictEqual(
      rows.map((row) => [row.name, row.state]),
      [["everything", "connected"]]
    )
    assert.isFalse(existsSync(join(box.project, "lathe.json")), "the project's config is never written")
  }, 90_000)

  it("edits lathe.jsonc when it exists, keeping its comments, and never the project's config", async () => {
    const box = setup()
    mkdirSync(box.configDir, { recursive: true })
    const file = join(box.configDir, "lathe.jsonc")
    writeFileSync(
      file,
      '{\n  // my model\n  "model": "anthropic/claude-sonnet-4-5",\n  "mcp": {\n    // keep this one\n    "old": { "type": "remote", "url": "https://old.example.com/mcp" }\n  }\n}\n'
    )
    const project = '{ "mcp": { "repo": { "type": "local", "command": ["x"] } } }\n'
    writeFileSync(join(box.project, "lathe.json"), project)
    const add = await lathe(
      ["mcp", "add", "docs", "--url", "https://mcp.example.com/mcp", "--header", "Authorization=Bearer {env:T}"],
      box
    )
    assert.strictEqual(add.code, 0, add.stderr)
    const added = readFileSync(file, "utf8")
    assert.include(added, "// my model")
    assert.include(added, "// keep this one")
    assert.deepStrictEqual((parse(added) as { mcp: unknown }).mcp, {
      old: { type: "remote", url: "https://old.example.com/mcp" },
      docs: { type: "remote", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer {env:T}" } }
    })
    assert.isFalse(existsSync(join(box.configDir, "lathe.json")))

    const again = await lathe(["mcp", "add", "docs", "--url", "https://other.example.com/mcp"], box)
    assert.strictEqual(again.code, 1)
    assert.match(again.stderr, /already has a server "docs"; pass --force/)

    const remove = await lathe(["mcp", "remove", "old"], box)
    assert.strictEqual(remove.code, 0, remove.stderr)
    const removed = readFileSync(file, "utf8")
    assert.include(removed, "// my model")
    assert.deepStrictEqual(Object.keys((parse(removed) as { mcp: object }).mcp), ["docs"])

    const projectOnly = await lathe(["mcp", "remove", "repo"], box)
    assert.strictEqual(projectOnly.code, 1)
    assert.match(projectOnly.stderr, /has no MCP server "repo"\. A project's servers .* editing those files/)
    assert.strictEqual(readFileSync(join(box.project, "lathe.json"), "utf8"), project)
  }, 90_000)

  it("bad input is refused with what to do, and the file is left alone (in process: no start-up per case)", async () => {
    const box = setup()
    /** `lathe mcp <args>` in this process, with the sandbox's env. */
    const mcp = async (args: ReadonlyArray<string>) => {
      let stderr = ""
      const io = {
        stdout: () => undefined,
        stderr: (t: string) => {
          stderr += t
        },
        env: box.env,
        cwd: box.project,
        isTTY: false
      }
      const code = await mcpCommand(args, io)
      return { code, stderr }
    }
    const cases: Array<[ReadonlyArray<string>, RegExp]> = [
      [["add", "x"], /give the server's command after "--"/],
      [["add", "x", "--url", "ftp://x"], /not valid: an http\(s\) URL/],
      [["add", "x", "--url", "https://x.example", "--", "npx"], /either --url .* or a command/],
      [["add", "x y", "--", "npx"], /is not a server name/],
      [["add", "x", "--header", "nope", "--url", "https://x.example"], /--header takes KEY=VALUE/],
      [["add", "x", "--bogus", "--", "npx"], /unknown option --bogus\./]
    ]
    for (const [args, message] of cases) {
      const run = await mcp(args)
      assert.strictEqual(run.code, 2, `${args.join(" ")}: ${run.stderr}`)
      assert.match(run.stderr, message)
    }
    assert.isFalse(existsSync(join(box.configDir, "lathe.json")))
  }, 90_000)
})
