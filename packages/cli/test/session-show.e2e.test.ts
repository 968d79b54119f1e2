import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type RecordedRequest, type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// `lathe session show`, `lathe export` and `lathe import` end to end: a real `lathe run` against a scripted model
// server stores a session with a retry, an automatic compaction and a subagent; the commands read it back.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const LINES = Array.from({ length: 40 }, (_, i) => `line ${i + 1} of the notes`).join("\n")

/**
 * The model's side of one turn, by what each request is: the title, the compaction summary, the explore subagent
 * (offered no `task` tool), or the build agent, whose requests go: a 429, then reasoning, text and a read whose
 * step fills the context (so the loop compacts), then a task call, then the answer.
 */
const script = () => {
  let parent = 0
  return (request: RecordedRequest): ScriptedReply => {
    const body = JSON.stringify(request.body)
    if (body.includes("Write a title for this conversation")) return { steps: [{ text: "Notes review" }] }
    if (body.includes("You summarise a coding session")) return { steps: [{ text: "Summary: notes.txt was read." }] }
    if (!body.includes('"name":"task"'))
      return body.includes("line 40 of the notes")
        ? { steps: [{ text: "The notes have forty lines." }] }
        : { steps: [{ tool: "read", input: { filePath: "notes.txt" } }] }
    parent++
    if (parent === 1) return { type: "error", status: 429, headers: { "retry-after-ms": "10" } }
    if (parent === 2)
      return {
        steps: [
          { reasoning: "The user wants the notes; reading them first is the quickest way." },
          { text: "Reading the notes." },
          { tool: "read", input: { filePath: "notes.txt" } }
        ],
        usage: { input: 1_950, output: 40 }
      }
    if (parent === 3)
      return {
        steps: [
          {
            tool: "task",
            input: { description: "count lines", prompt: "How many lines has notes.txt?", subagent_type: "explore" }
          }
        ]
      }
    return { steps: [{ text: "All done: forty lines." }] }
  }
}

interface Doc {
  readonly format: string
  readonly session: { readonly id: string; readonly title: string }
  readonly messages: ReadonlyArray<{
    readonly info: { readonly role: string; readonly summary?: boolean; readonly agent: string }
    readonly parts: ReadonlyArray<{
      readonly part: { readonly type: string; readonly tool?: string; readonly cost?: number }
      readonly decisions?: ReadonlyArray<{
        readonly permission: string
        readonly decision: string
        readonly by: string
      }>
      readonly subagent?: Doc
    }>
  }>
  readonly subagents: ReadonlyArray<Doc>
}

const partsOf = (doc: Doc) => doc.messages.flatMap((m) => m.parts)

/** A sandbox whose global config names the scripted server with a small, priced context window. */
const configured = (url: string) => {
  const box = sandbox()
  writeFileSync(join(box.project, "notes.txt"), `${LINES}\n`)
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({
      model: "local/m",
      retry: { max_delay_ms: 20 },
      provider: {
        local: {
          type: "openai-compatible",
          baseURL: url,
          models: { m: { context: 2_000, output: 100, cost: { input: 3, output: 15 } } }
        }
      }
    })
  )
  return box
}

describe("lathe session show / export / import (end to end)", () => {
  it("shows a session with a retry, a compaction and a subagent; export → import → show gives the same document", async () => {
    server = await startScriptedServer(script())
    const box = configured(server.url)
    const opts = { cwd: box.project, env: box.env }
    const run = await runLathe(["run", "--format", "json", "how long are the notes?"], opts)
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isTrue(
      run.events.some((e) => e.type === "session.compacted"),
      "the turn compacted"
    )

    // --json: the stored records in order, with the decisions and the subagent under its call.
    const json = await runLathe(["session", "show", "--last", "--json"], opts)
    assert.strictEqual(json.code, 0, json.stderr)
    const doc = JSON.parse(json.stdout) as Doc
    assert.strictEqual(doc.format, "lathe.session")
    const types = partsOf(doc).map((p) => p.part.type)
    for (const type of ["text", "reasoning", "retry", "tool", "step-finish", "compaction"]) assert.include(types, type)
    assert.isTrue(
      doc.messages.some((m) => m.info.summary === true),
      "the compaction summary is kept"
    )
    assert.isTrue(
      partsOf(doc).some((p) => p.part.type === "step-finish" && (p.part.cost ?? 0) > 0),
      "steps are priced"
    )
    const task = partsOf(doc).find((p) => p.part.type === "tool" && p.part.tool === "task")
    assert.isDefined(task?.subagent, "the explore session is nested under its task call")
    assert.deepStrictEqual(doc.subagents, [])
    const childRead = partsOf(task?.subagent as Doc).find((p) => p.part.tool === "read")
    assert.strictEqual(childRead?.decisions?.[0]?.permission, "read")
    assert.strictEqual(childRead?.decisions?.[0]?.decision, "allow")
    const parentRead = partsOf(doc).find((p) => p.part.tool === "read")
    assert.strictEqual(parentRead?.decisions?.[0]?.by, "rule")

    // Text: every kind of part, reasoning folded and the long output cut unless asked.
    const text = await runLathe(["session", "show", doc.session.id], opts)
    assert.strictEqual(text.code, 0, text.stderr)
    for (const expected of [
      `Session ${doc.session.id}`,
      "▶ you",
      "how long are the notes?",
      "↻ attempt 1 failed",
      "∴ reasoning (65 characters; --reasoning shows it)",
      "Reading the notes.",
      "✓ read notes.txt · completed",
      'input: {"filePath":"notes.txt"}',
      'permission: read "',
      ": allow by rule — rule read",
      "more lines (--full shows all)",
      "── compaction (automatic)",
      "◀ summary by compaction",
      "✓ task count lines (@explore) · completed",
      "step finished: tool-calls · tokens in 1,950, out 40",
      "All done: forty lines."
    ])
      assert.include(text.stdout, expected)
    assert.notInclude(text.stdout, "line 40 of the notes")
    const childHeader = `      Session ${task?.subagent?.session.id}`
    assert.include(text.stdout, childHeader, "the subagent's session is indented under the task call")
    const full = await runLathe(["session", "show", "--last", "--reasoning", "--full"], opts)
    assert.include(full.stdout, "∴ The user wants the notes")
    assert.include(full.stdout, "line 40 of the notes")

    // Export: Markdown and JSON files; the JSON is the document show prints.
    const md = await runLathe(["export", doc.session.id, "-o", "session.md"], opts)
    assert.strictEqual(md.code, 0, md.stderr)
    const markdown = readFileSync(join(box.project, "session.md"), "utf8")
    assert.match(markdown, /^# .+\n\n- session: `ses_/)
    for (const expected of [
      "<details><summary>Reasoning (65 characters)</summary>",
      "**✓ task** count lines (@explore) · completed",
      "> ## count lines (@explore subagent)",
      "*Compaction (automatic) at",
      "line 40 of the notes",
      "> ↻ attempt 1 failed"
    ])
      assert.include(markdown, expected)
    const exported = await runLathe(["export", "--last", "--format", "json", "-o", "session.json"], opts)
    assert.strictEqual(exported.code, 0, exported.stderr)
    const file = join(box.project, "session.json")
    assert.strictEqual(readFileSync(file, "utf8"), json.stdout)

    // Import into another data dir: show gives the same document, and a second import is refused.
    const other = sandbox()
    const there = { cwd: other.project, env: other.env }
    const imported = await runLathe(["import", file], there)
    assert.strictEqual(imported.code, 0, imported.stderr)
    assert.include(imported.stdout, `Imported session ${doc.session.id}`)
    assert.include(imported.stdout, "1 subagent session")
    assert.include(imported.stderr, "belongs to another project")
    const again = await runLathe(["session", "show", doc.session.id, "--json"], there)
    assert.strictEqual(again.code, 0, again.stderr)
    assert.strictEqual(again.stdout, json.stdout)
    const twice = await runLathe(["import", file], there)
    assert.strictEqual(twice.code, 1)
    assert.include(twice.stderr, `already holds session ${doc.session.id}`)
  }, 180_000)

  it("import refuses a document whose parts belong to another session, and a file that is not a document", async () => {
    const box = sandbox()
    const opts = { cwd: box.project, env: box.env }
    const session = {
      id: "ses_a",
      projectID: "p",
      directory: box.project,
      title: "t",
      time: { created: 1, updated: 1 }
    }
    const info = {
      id: "msg_a",
      sessionID: "ses_a",
      role: "user",
      time: { created: 1 },
      agent: "build",
      model: { providerID: "x", modelID: "y" }
    }
    const part = { id: "prt_a", sessionID: "ses_other", messageID: "msg_a", type: "text", text: "hi" }
    const doc = { format: "lathe.session", version: 1, session, messages: [{ info, parts: [{ part }] }], subagents: [] }
    writeFileSync(join(box.project, "bad.json"), JSON.stringify(doc))
    const bad = await runLathe(["import", "bad.json"], opts)
    assert.strictEqual(bad.code, 1)
    assert.include(bad.stderr, "do not belong together, so nothing was imported: part prt_a names session ses_other")
    const show = await runLathe(["session", "show", "ses_a"], opts)
    assert.strictEqual(show.code, 1)
    assert.include(show.stderr, 'No session "ses_a"')
    writeFileSync(join(box.project, "notes.json"), JSON.stringify({ notes: [] }))
    const notDoc = await runLathe(["import", "notes.json"], opts)
    assert.strictEqual(notDoc.code, 1)
    assert.include(notDoc.stderr, "is not a Lathe session document")
  }, 60_000)
})
