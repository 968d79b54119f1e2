import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type RecordedRequest, type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// The parts that record a subagent's work, end to end: a real `lathe run` whose build agent hands a file edit to the
// general subagent; `session show --json` carries the task's `subtask` part (with the child session's id) and the
// child step's summary (files with lines added and removed), and, with `summary.enabled`, the session's summary.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** The model's side: the summary agent, the subagent (offered no `task` tool: it writes, then answers), the build agent. */
const script = () => {
  let child = 0
  let parent = 0
  return (request: RecordedRequest): ScriptedReply => {
    const body = JSON.stringify(request.body)
    if (body.includes("Summarise the conversation above"))
      return { steps: [{ text: "The general agent wrote hello.txt (two lines)." }] }
    if (!body.includes('"name":"task"')) {
      child++
      return child === 1
        ? { steps: [{ tool: "write", input: { filePath: "hello.txt", content: "hello\nworld\n" } }] }
        : { steps: [{ text: "Wrote hello.txt." }] }
    }
    parent++
    if (parent === 1)
      return {
        steps: [
          {
            tool: "task",
            input: { description: "write hello", prompt: "Write hello.txt with two lines.", subagent_type: "general" }
          }
        ]
      }
    return { steps: [{ text: "Done: hello.txt is written." }] }
  }
}

interface DocPart {
  readonly part: {
    readonly type: string
    readonly tool?: string
    readonly agent?: string
    readonly childSessionID?: string
    readonly status?: string
    readonly files?: ReadonlyArray<string>
    readonly summary?: unknown
    readonly name?: string
  }
  readonly subagent?: Doc
}
interface Doc {
  readonly session: { readonly id: string; readonly summary?: string }
  readonly messages: ReadonlyArray<{ readonly parts: ReadonlyArray<DocPart> }>
}
const partsOf = (doc: Doc) => doc.messages.flatMap((m) => m.parts)

const configured = (url: string) => {
  const box = sandbox()
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({
      model: "local/m",
      summary: { enabled: true },
      permission: { edit: "allow", task: "allow" },
      provider: {
        local: { type: "openai-compatible", baseURL: url, models: { m: { context: 100_000, output: 1_000 } } }
      }
    })
  )
  return box
}

describe("subtask parts and step summaries (end to end)", () => {
  it("session show --json carries the task's subtask part with its child session, and the child step's summary", async () => {
    server = await startScriptedServer(script())
    const box = configured(server.url)
    const opts = { cwd: box.project, env: box.env }
    const run = await runLathe(["run", "--format", "json", "have a subagent write hello.txt"], opts)
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(readFileSync(join(box.project, "hello.txt"), "utf8"), "hello\nworld\n")

    const json = await runLathe(["session", "show", "--last", "--json"], opts)
    assert.strictEqual(json.code, 0, json.stderr)
    const doc = JSON.parse(json.stdout) as Doc
    const task = partsOf(doc).find((p) => p.part.type === "tool" && p.part.tool === "task")
    const child = task?.subagent
    assert.isDefined(child, "the subagent's session is nested under the task call")
    const subtask = partsOf(doc).find((p) => p.part.type === "subtask")?.part
    assert.deepInclude(subtask, {
      agent: "general",
      childSessionID: child?.session.id,
      status: "completed"
    })
    // The subagent's step wrote the file: its patch part carries the step summary.
    const patch = partsOf(child as Doc).find((p) => p.part.type === "patch")?.part
    assert.deepStrictEqual(patch?.files, ["hello.txt"])
    assert.deepStrictEqual(patch?.summary, {
      additions: 2,
      deletions: 0,
      files: [{ file: "hello.txt", additions: 2, deletions: 0 }]
    })
    // summary.enabled: the session keeps the summary agent's answer (only the top-level session is summarised).
    assert.strictEqual(doc.session.summary, "The general agent wrote hello.txt (two lines).")
    assert.strictEqual(child?.session.summary, undefined)

    const text = await runLathe(["session", "show", doc.session.id], opts)
    assert.strictEqual(text.code, 0, text.stderr)
    assert.include(text.stdout, "  summary: The general agent wrote hello.txt (two lines).")
    assert.include(text.stdout, "→ @general: write hello (completed)")
    assert.include(text.stdout, "± 1 file changed (+2): hello.txt +2")
    const md = await runLathe(["export", doc.session.id, "-o", "session.md"], opts)
    assert.strictEqual(md.code, 0, md.stderr)
    const markdown = readFileSync(join(box.project, "session.md"), "utf8")
    assert.include(markdown, "± 1 file changed (+2): `hello.txt` +2")
    assert.include(markdown, "- summary: The general agent wrote hello.txt (two lines).")
  }, 120_000)

  it("an @subagent mention in lathe run stores an agent part in the user message", async () => {
    server = await startScriptedServer(() => ({ steps: [{ text: "Hi from general." }] }))
    const box = configured(server.url)
    const opts = { cwd: box.project, env: box.env }
    const run = await runLathe(["run", "@general say hi"], { ...opts, input: "" })
    assert.strictEqual(run.code, 0, run.stderr)
    const json = await runLathe(["session", "show", "--last", "--json"], opts)
    const doc = JSON.parse(json.stdout) as Doc
    const user = doc.messages[0]?.parts.map((p) => p.part) ?? []
    assert.deepStrictEqual(
      user.map((p) => p.type),
      ["text", "agent"]
    )
    assert.deepInclude(user[1], { type: "agent", name: "general" })
  }, 60_000)
})
