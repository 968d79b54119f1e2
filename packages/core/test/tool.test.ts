import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, expect, it } from "@effect/vitest"
import { type AnyTool, rejected, Tool, type ToolArgs, type ToolRunContext } from "@lathe/plugin"
import { Effect } from "effect"
import { z } from "zod"
import { truncateOutput } from "../src/plugin-host/truncate.js"

const tempDir = () => mkdtempSync(join(tmpdir(), "lathe-tool-"))

/** The host's truncation into `dir`, as the tool runner passes it. */
const truncateIn = (dir: string) => (output: string, name: string) => truncateOutput(output, { dir, name })

const context = (overrides: Partial<ToolRunContext> = {}): ToolRunContext => ({
  sessionID: "ses_1",
  messageID: "msg_1",
  callID: "call_1",
  agent: "build",
  directory: "/project",
  root: "/project",
  abort: new AbortController().signal,
  ask: () => Promise.resolve(),
  metadata: () => {},
  ...overrides
})

const echo = Tool.define("echo", {
  description: "Echo the text back",
  parameters: z.object({ text: z.string(), times: z.number().int().default(1) }),
  mutates: false,
  execute: ({ text, times }, ctx) => ({
    title: `echo ${ctx.callID}`,
    output: text.repeat(times),
    metadata: { agent: ctx.agent }
  })
})

const edit = Tool.define("edit", {
  description: "Apply edits",
  parameters: z.object({
    path: z.string(),
    options: z.object({ depth: z.number().int() }),
    edits: z.array(z.object({ oldString: z.string(), newString: z.string() }))
  }),
  execute: async ({ path, edits }) => ({ title: path, output: `${edits.length} edits` })
})

/** A tool whose `execute` is given per test. */
const failing = (execute: () => Promise<never> | never) =>
  Tool.define("boom", { description: "Fails", parameters: z.object({}), execute })

describe("Tool.define", () => {
  it.effect("runs execute with the parsed arguments and reports an untruncated result", () =>
    Effect.gen(function* () {
      const output = yield* echo.run({ text: "hi", times: 2 }, context({ truncate: truncateIn(tempDir()) }))
      assert.deepStrictEqual(output, {
        title: "echo call_1",
        output: "hihi",
        metadata: { agent: "build", truncated: false }
      })
      assert.strictEqual(echo.id, "echo")
      assert.strictEqual(echo.mutates, false)
      assert.strictEqual(edit.mutates, true)
      const schema = echo.jsonSchema()
      assert.strictEqual(schema.type, "object")
      assert.deepStrictEqual(schema.required, ["text"])
    })
  )

  it("tools of different argument types fit one list, and their argument types can be recovered", () => {
    const tools: AnyTool[] = [echo, edit]
    const byId: Record<string, AnyTool> = { echo, edit }
    const args: ToolArgs<typeof edit> = { path: "a", options: { depth: 1 }, edits: [] }
    expect(tools.map((tool) => tool.id)).toEqual(Object.keys(byId))
    expect(args.path).toBe("a")
  })

  it.effect("invalid arguments fail with one line per issue, dotted paths and array indexes", () =>
    Effect.gen(function* () {
      const error = yield* edit
        .run({ options: { depth: 1.5 }, edits: [{ oldString: 3, newString: "b" }] }, context())
        .pipe(Effect.flip)
      assert.strictEqual(error._tag, "ToolInvalidArguments")
      assert.strictEqual(
        error.message,
        "The edit tool was called with invalid arguments:\n" +
          "- path: Invalid input: expected string, received undefined\n" +
          "- options.depth: Invalid input: expected int, received number\n" +
          "- edits[0].oldString: Invalid input: expected string, received number\n" +
          "Rewrite the input so it satisfies the tool's schema and call it again."
      )
      const root = yield* edit.run("not an object", context()).pipe(Effect.flip)
      assert.strictEqual(
        root.message,
        "The edit tool was called with invalid arguments:\n" +
          "- (root): Invalid input: expected object, received string\n" +
          "Rewrite the input so it satisfies the tool's schema and call it again."
      )
    })
  )

  it.effect("a thrown Error, a thrown string and an Error without message become ToolExecutionError", () =>
    Effect.gen(function* () {
      const error = yield* failing(async () => {
        throw new Error("disk full")
      })
        .run({}, context())
        .pipe(Effect.flip)
      assert.strictEqual(error._tag, "ToolExecutionError")
      assert.strictEqual(error.message, "disk full")
      const text = yield* failing(() => {
        throw "plain text"
      })
        .run({}, context())
        .pipe(Effect.flip)
      assert.strictEqual(text.message, "plain text")
      const bare = yield* failing(() => Promise.reject(new Error()))
        .run({}, context())
        .pipe(Effect.flip)
      assert.strictEqual(bare.message, "Error: the boom tool failed without a message.")
      const object = yield* failing(() => Promise.reject({ code: 7 }))
        .run({}, context())
        .pipe(Effect.flip)
      assert.strictEqual(object.message, '{"code":7}')
    })
  )

  it.effect("a permission rejection from ctx.ask comes out as the same error", () =>
    Effect.gen(function* () {
      const rejection = rejected("edit", ["src/a.ts"], "not that file")
      const tool = Tool.define("write", {
        description: "Writes",
        parameters: z.object({ path: z.string() }),
        execute: async ({ path }, ctx) => {
          await ctx.ask({ permission: "edit", patterns: [path] })
          return { title: path, output: "written" }
        }
      })
      const error = yield* tool
        .run({ path: "src/a.ts" }, context({ ask: () => Promise.reject(rejection) }))
        .pipe(Effect.flip)
      assert.strictEqual(error, rejection)
    })
  )

  it.effect("an abort before the call fails with ToolAborted without running execute", () =>
    Effect.gen(function* () {
      const controller = new AbortController()
      controller.abort()
      let ran = false
      const tool = Tool.define("noop", {
        description: "Does nothing",
        parameters: z.object({}),
        execute: () => {
          ran = true
          return { title: "", output: "" }
        }
      })
      const error = yield* tool.run({}, context({ abort: controller.signal })).pipe(Effect.flip)
      assert.strictEqual(error._tag, "ToolAborted")
      assert.strictEqual(error.message, "The noop tool call was aborted.")
      assert.isFalse(ran)
    })
  )

  it.live("an abort while execute runs fails with ToolAborted and reaches execute's signal", () =>
    Effect.gen(function* () {
      const controller = new AbortController()
      let seen = false
      const tool = Tool.define("slow", {
        description: "Waits",
        parameters: z.object({}),
        mutates: false,
        execute: (_, ctx) =>
          new Promise<never>((_resolve, reject) => {
            ctx.abort.addEventListener("abort", () => {
              seen = true
              reject(new Error("stopped"))
            })
          })
      })
      setTimeout(() => controller.abort(), 10)
      const error = yield* tool.run({}, context({ abort: controller.signal })).pipe(Effect.flip)
      assert.strictEqual(error._tag, "ToolAborted")
      assert.isTrue(seen)
    })
  )

  it.effect("a long output is truncated once, with the full text saved", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const text = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n")
      const tool = Tool.define("long", {
        description: "Prints a lot",
        parameters: z.object({}),
        execute: () => ({ title: "long", output: text })
      })
      const output = yield* tool.run({}, context({ truncate: truncateIn(dir) }))
      assert.isTrue(output.metadata.truncated)
      const path = output.metadata.outputPath
      assert.isString(path)
      assert.strictEqual(readFileSync(path ?? "", "utf8"), text)
      assert.isTrue(output.output.startsWith("line 1\nline 2\n"))
      assert.include(output.output, "line 2000\n\n... 1000 more lines truncated")
      assert.include(output.output, `The full output is saved at ${path}.`)
    })
  )

  it.effect("a tool that truncated its own output is passed through", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const text = "x\n".repeat(5000)
      const tool = Tool.define("self", {
        description: "Truncates itself",
        parameters: z.object({}),
        execute: () => ({ title: "self", output: text, metadata: { truncated: true, outputPath: "/elsewhere" } })
      })
      const output = yield* tool.run({}, context({ truncate: truncateIn(dir) }))
      assert.strictEqual(output.output, text)
      assert.deepStrictEqual(output.metadata, { truncated: true, outputPath: "/elsewhere" })
      assert.deepStrictEqual(readdirSync(dir), [])
    })
  )

  it.effect("an unwritable truncation dir still truncates and says the output could not be saved", () =>
    Effect.gen(function* () {
      const file = join(tempDir(), "a-file")
      writeFileSync(file, "")
      const tool = Tool.define("long", {
        description: "Prints a lot",
        parameters: z.object({}),
        execute: () => ({ title: "long", output: "y\n".repeat(3000) })
      })
      const output = yield* tool.run({}, context({ truncate: truncateIn(join(file, "out")) }))
      assert.isTrue(output.metadata.truncated)
      assert.isUndefined(output.metadata.outputPath)
      assert.match(
        output.output,
        /\.\.\. 1000 more lines truncated \(output was 3000 lines, 6000 bytes\)\. The full output could not be saved \(.*ENOTDIR.*\)\.$/
      )
    })
  )
})
