/**
 * "Walls, round three", untrusted globs and caps, end to end through the real CLI with no terminal:
 * - an untrusted project's `instructions` that spell the parent as `[.][.]` or `.{.,x}` (Node's glob, the one Lathe
 *   uses, resolves them outside the project) send no outside secret to the model;
 * - a 30 MB `AGENTS.md` is sent cut to 256 KiB, with a notice naming it;
 * - a `lathe.json` nested 200,000 deep is an error naming the file (exit 1), not a stack overflow;
 * - a tool call with a 2 MB argument is refused: the next request carries the error, not the 2 MB.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { glob } from "node:fs/promises"
import { join, resolve } from "node:path"
import { type ScriptedServer, type ServerScript, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const SECRET = "OUTSIDE-SSH-KEY-SECRET-4d1e"

/** Every match of `pattern`, as Node's glob gives them. */
const globAll = async (pattern: string): Promise<Array<string>> => {
  const out: Array<string> = []
  for await (const match of glob(pattern)) out.push(match)
  return out
}
const PATTERNS = ["[.][.]/outside/secret.md", ".{.,x}/outside/secret.md"]

/** A sandbox whose person's config points at a scripted model; the project is what the repository committed. */
const setup = async (script: ServerScript) => {
  const model = await startScriptedServer(script)
  servers.push(model)
  const box = sandbox()
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({
      model: "local/m",
      provider: { local: { type: "openai-compatible", baseURL: model.url, models: { m: {} } } }
    })
  )
  const run = (prompt = "hello") =>
    runLathe(["run", "--format", "json", prompt], { cwd: box.project, env: box.env, timeoutMs: 60_000 })
  return { model, box, run }
}

const noticesOf = (events: ReadonlyArray<{ readonly type: string }>): Array<string> =>
  events.flatMap((e) => (e.type === "notice" && "message" in e ? [String(e.message)] : []))

describe("walls3: untrusted instructions globs (end to end)", () => {
  it("Node's glob resolves [.][.] and .{.,x} to the parent; lathe run sends no secret from there", async () => {
    const { model, box, run } = await setup(() => ({ steps: [{ text: "Done." }] }))
    // The folder beside the project (a cloned repository's parent holds the person's other files).
    const outside = join(box.dir, "outside")
    mkdirSync(outside)
    writeFileSync(join(outside, "secret.md"), SECRET)
    writeFileSync(join(box.project, "lathe.json"), JSON.stringify({ instructions: PATTERNS }))
    // The payload bites without Lathe: the same glob, resolved at the project root, reaches the file outside.
    for (const pattern of PATTERNS) {
      const matches = await globAll(resolve(box.project, pattern))
      assert.deepStrictEqual(
        matches.map((m) => realpathSync(m)),
        [realpathSync(join(outside, "secret.md"))],
        pattern
      )
      assert.include(readFileSync(matches[0] ?? "", "utf8"), SECRET)
    }

    const result = await run()
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(model.requests.length, 1)
    assert.notInclude(JSON.stringify(model.requests[0]?.body), SECRET)
    const notices = noticesOf(result.events)
    for (const pattern of PATTERNS)
      assert.isTrue(
        notices.some((n) => n.includes(`instructions ${JSON.stringify(pattern)} reaches`) && n.includes("lathe trust")),
        notices.join("\n")
      )
  })
})

describe("walls3: caps on rules, config depth and tool-call input (end to end)", () => {
  it("a 30 MB AGENTS.md is sent cut to 256 KiB, with a notice naming it", async () => {
    const { model, box, run } = await setup(() => ({ steps: [{ text: "Done." }] }))
    const file = join(box.project, "AGENTS.md")
    writeFileSync(file, `TOP-RULE\n${"z".repeat(30 * 1024 * 1024)}\nBOTTOM-RULE`)
    const result = await run()
    assert.strictEqual(result.code, 0, result.stderr)
    const body = JSON.stringify(model.requests[0]?.body)
    assert.include(body, "TOP-RULE")
    assert.notInclude(body, "BOTTOM-RULE")
    assert.isBelow(body.length, 400 * 1024)
    assert.include(body, "only its first 262144 bytes are included")
    const real = join(realpathSync(box.project), "AGENTS.md")
    assert.isTrue(
      noticesOf(result.events).some((n) => n.startsWith(`Rules file ${real} is `) && n.includes("256 KiB")),
      result.stdout
    )
  })

  it("a lathe.json nested 200,000 deep fails with the file named and exit 1, and is left as it was", async () => {
    const { model, box, run } = await setup(() => ({ steps: [{ text: "Done." }] }))
    const file = join(box.project, "lathe.json")
    const deep = `{"instructions": ${"[".repeat(200_000)}${"]".repeat(200_000)}}`
    writeFileSync(file, deep)
    const result = await run()
    assert.strictEqual(result.code, 1, result.stderr)
    assert.include(result.stderr, `${realpathSync(box.project)}/lathe.json:1:`)
    assert.include(result.stderr, "nested more than 64 levels")
    assert.notInclude(result.stderr, "Maximum call stack")
    assert.strictEqual(model.requests.length, 0)
    assert.strictEqual(readFileSync(file, "utf8"), deep)
  })

  it("a tool call with a 2 MB argument is refused; the next request carries the error, not the 2 MB", async () => {
    const huge = "Q".repeat(2 * 1024 * 1024)
    const { model, box, run } = await setup((_request, index) =>
      index === 0
        ? { steps: [{ tool: "write", input: { filePath: "big.txt", content: huge } }] }
        : { steps: [{ text: "Understood." }] }
    )
    const result = await run("write a big file")
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(model.requests.length, 2)
    const second = JSON.stringify(model.requests[1]?.body)
    assert.include(second, "bytes of input, over the cap of 1048576 bytes (1 MiB)")
    assert.notInclude(second, "QQQQQQQQ")
    assert.isBelow(second.length, 200 * 1024)
    assert.notInclude(result.stdout, "QQQQQQQQ")
    assert.isFalse(existsSync(join(box.project, "big.txt")))
  })
})
