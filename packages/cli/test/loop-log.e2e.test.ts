/**
 * Loop logging through the real CLI: `LATHE_LOG=debug` writes JSON lines for each step and tool call (with their ids
 * and durations) to `<data>/logs/lathe-<date>.log`, `--format json`'s stdout stays the same events, `--log-level
 * info` leaves out the starts, and `LATHE_LOG_STDERR=1` writes the same lines to stderr.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

/** Runs `echo hi` through bash, then answers. */
const script = (request: RecordedRequest) =>
  JSON.stringify(request.body).includes('"role":"tool"')
    ? { steps: [{ text: "Done." }] }
    : { steps: [{ tool: "bash", input: { command: "echo hi", description: "say hi" } }] }

interface LogLine {
  readonly time: string
  readonly level: string
  readonly message: string
  readonly [field: string]: unknown
}

const setup = async () => {
  const server = await startScriptedServer(script)
  servers.push(server)
  const box = sandbox()
  const config = join(box.dir, "config", "lathe", "lathe.json")
  mkdirSync(join(config, ".."), { recursive: true })
  writeFileSync(
    config,
    JSON.stringify({
      model: "local/m",
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { m: {} } } },
      permission: { bash: "allow" }
    })
  )
  const logs = join(box.env.LATHE_DATA_DIR ?? "", "logs")
  const run = (env: Record<string, string> = {}, flags: ReadonlyArray<string> = []) =>
    runLathe([...flags, "run", "--format", "json", "say hi"], { cwd: box.project, env: { ...box.env, ...env } })
  /** The lines of the log files, oldest file first. */
  const lines = (): Array<LogLine> =>
    existsSync(logs)
      ? readdirSync(logs)
          .sort()
          .flatMap((name) => readFileSync(join(logs, name), "utf8").split("\n"))
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line) as LogLine)
      : []
  return { ...box, run, lines, logs }
}

const shape = (stdout: string) =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => (JSON.parse(line) as { type: string }).type)

describe("loop logging (end to end)", () => {
  it("LATHE_LOG=debug logs each step and tool call with ids and durations; stdout is unchanged", async () => {
    const t = await setup()
    const plain = await t.run()
    assert.strictEqual(plain.code, 0, plain.stderr)
    assert.isFalse(existsSync(t.logs), "off by default: no log folder")

    const logged = await t.run({ LATHE_LOG: "debug" })
    assert.strictEqual(logged.code, 0, logged.stderr)
    // The same events. Their order may differ a little: a step's patch is recorded while the next request is out, so
    // its `part.updated` events can come before or after the next step's first ones.
    assert.deepStrictEqual(shape(logged.stdout).sort(), shape(plain.stdout).sort())
    assert.strictEqual(logged.stderr, plain.stderr)

    const files = readdirSync(t.logs)
    assert.deepStrictEqual(files, [`lathe-${new Date().toISOString().slice(0, 10)}.log`])
    const lines = t.lines()
    const of = (message: string) => lines.filter((line) => line.message === message)
    const starts = of("step.start")
    const finishes = of("step.finish")
    assert.lengthOf(starts, 2)
    assert.lengthOf(finishes, 2)
    for (const line of finishes) {
      assert.isString(line.sessionID)
      assert.isNumber(line.durationMs)
      assert.isNumber((line.tokens as { input: number }).input)
      assert.strictEqual(line.level, "info")
    }
    assert.deepStrictEqual(
      finishes.map((line) => line.step),
      starts.map((line) => line.step)
    )
    assert.lengthOf(of("tool.start"), 1, "a call's start is logged once, however often its progress changes")
    const [toolStart] = of("tool.start")
    const [toolEnd] = of("tool.finish")
    assert.strictEqual(toolStart?.level, "debug")
    assert.strictEqual(toolEnd?.tool, "bash")
    assert.strictEqual(toolEnd?.status, "completed")
    assert.isString(toolEnd?.callID)
    assert.strictEqual(toolEnd?.callID, toolStart?.callID)
    assert.isNumber(toolEnd?.durationMs)
    const ended = logged.events.find((event) => event.type === "tool.completed")
    assert.strictEqual(ended?.type === "tool.completed" ? ended.callID : undefined, toolEnd?.callID)
  }, 60_000)

  it("--log-level info leaves out the starts; LATHE_LOG_STDERR=1 writes the lines to stderr too", async () => {
    const t = await setup()
    const result = await t.run({ LATHE_LOG_STDERR: "1" }, ["--log-level", "info"])
    assert.strictEqual(result.code, 0, result.stderr)
    const lines = t.lines()
    assert.deepStrictEqual(
      lines.map((line) => line.message),
      ["tool.finish", "step.finish", "step.finish"] // the call ends within the first step
    )
    const echoed = result.stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as LogLine)
    assert.deepStrictEqual(echoed, lines)
    assert.notInclude(result.stdout, '"step.finish"', "never on stdout")
  }, 60_000)

  it("refuses a --log-level that is not a level", async () => {
    const t = await setup()
    const result = await t.run({}, ["--log-level", "loud"])
    assert.strictEqual(result.code, 2)
    assert.include(result.stderr, '--log-level takes debug, info or off, not "loud".')
  }, 30_000)
})
