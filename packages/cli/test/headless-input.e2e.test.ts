import { spawn } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { type CliRun, runLathe, sandbox } from "./helpers.js"

// What a script hands `lathe run` besides its message: piped stdin, -f files, --allow/--deny. Through the real CLI
// against the scripted model; what reaches the model is read from the request bodies the server received.

// A 1×1 PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64"
)

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const setup = async (turns: ReadonlyArray<ScriptedReply>, model = "gpt-4o", config?: unknown) => {
  server = await startScriptedServer(turns)
  const box = sandbox()
  if (config !== undefined) writeFileSync(join(box.project, "lathe.json"), JSON.stringify(config))
  return { ...box, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: model }, server }
}

const answers = (text: string): ReadonlyArray<ScriptedReply> => [{ steps: [{ text }] }]

/** The messages of the `n`th request the model got, as JSON text. */
const sent = (n = 0): string =>
  JSON.stringify((server?.requests[n]?.body as { messages?: unknown } | undefined)?.messages)

/** The user message's text parts of the first request, in order. */
const userTexts = (): ReadonlyArray<string> => {
  const body = server?.requests[0]?.body as { messages?: Array<{ role: string; content: unknown }> } | undefined
  const user = body?.messages?.find((m) => m.role === "user")
  const content = user?.content
  if (typeof content === "string") return [content]
  return (content as Array<{ type: string; text?: string }>).flatMap((c) => (c.type === "text" ? [c.text ?? ""] : []))
}

const ok = (run: CliRun) => assert.strictEqual(run.code, 0, run.stdout + run.stderr)

describe("lathe run: piped stdin", () => {
  it("printf … | lathe run 'review': the argument is the instruction, stdin the material, delimited", async () => {
    const { project, env } = await setup(answers("Looks fine."))
    const diff = "diff --git a/x.ts b/x.ts\n+const added = 1\n"
    const run = await runLathe(["run", "review"], { cwd: project, env, input: diff })
    ok(run)
    assert.include(run.stdout, "Looks fine.")
    const [instruction, material] = userTexts()
    assert.strictEqual(instruction, "review")
    assert.include(material, "piped this text into the command (stdin)")
    assert.include(material, `<stdin>\n${diff}</stdin>`)
  })

  it("an empty stdin leaves the prompt as it is", async () => {
    const { project, env } = await setup(answers("ok"))
    const run = await runLathe(["run", "review"], { cwd: project, env, input: "" })
    ok(run)
    assert.deepStrictEqual(userTexts(), ["review"])
  })

  it("with no argument stdin is the prompt, as before", async () => {
    const { project, env } = await setup(answers("ok"))
    const run = await runLathe(["run"], { cwd: project, env, input: "explain the build\n" })
    ok(run)
    assert.deepStrictEqual(userTexts(), ["explain the build"])
    assert.notInclude(sent(), "<stdin>")
  })

  it("binary stdin is refused with exit 2 and no request", async () => {
    const { project, env } = await setup(answers("never"))
    const run = await runLathe(["run", "review"], { cwd: project, env, input: "PK\u0003\u0004\u0000\u0000binary" })
    assert.strictEqual(run.code, 2, run.stderr)
    assert.include(run.stderr, "stdin is not text")
    assert.strictEqual(server?.requests.length, 0)
  })

  it("stdin past the limit (1 MiB) is refused with the limit and the fix, never cut", async () => {
    const { project, env } = await setup(answers("never"))
    const run = await runLathe(["run", "review"], { cwd: project, env, input: "x".repeat(1024 * 1024 + 1) })
    assert.strictEqual(run.code, 2, run.stderr)
    assert.include(run.stderr, "more than 1 MiB (1048576 bytes)")
    assert.include(run.stderr, "nothing was sent")
    assert.strictEqual(server?.requests.length, 0)
  })

  it("a pipe a parent opened and never writes to (Node's spawn default) does not hang the run", {
    timeout: 60_000
  }, async () => {
    const { project, env } = await setup(answers("Done without stdin."))
    const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
    const child = spawn(
      process.execPath,
      ["--conditions=@lathe/source", "--import", import.meta.resolve("tsx"), bin, "run", "review"],
      { cwd: project, env, stdio: ["pipe", "pipe", "pipe"] }
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    assert.strictEqual(code, 0, stderr)
    assert.include(stdout, "Done without stdin.")
    assert.include(stderr, "nothing arrived on stdin")
    assert.deepStrictEqual(userTexts(), ["review"])
  })
})

describe("lathe run -f", () => {
  it("a PNG reaches a model that takes images as an image part; a text file as its text with its path", async () => {
    const { project, env } = await setup(answers("A pixel and a note."))
    writeFileSync(join(project, "shot.bin"), PNG) // recognised by its bytes, not its name
    writeFileSync(join(project, "notes.txt"), "remember the milk\n")
    const run = await runLathe(["run", "-f", "shot.bin", "--file", "notes.txt", "describe these"], {
      cwd: project,
      env
    })
    ok(run)
    const messages = sent()
    assert.include(messages, `data:image/png;base64,${PNG.toString("base64")}`)
    assert.include(messages, "image_url")
    assert.include(messages, '<file path=\\"notes.txt\\">\\nremember the milk\\n</file>')
    assert.strictEqual(userTexts()[0], "describe these")
  })

  it("a model without image input refuses a PNG with one message and no request", async () => {
    const { project, env, dir } = await setup(answers("never"), "some-local-model")
    writeFileSync(join(project, "pic.png"), PNG)
    const run = await runLathe(["run", "--format", "json", "-f", "pic.png", "what is this?"], { cwd: project, env })
    assert.strictEqual(run.code, 2, run.stderr)
    assert.include(run.stderr, "does not take images")
    assert.strictEqual(server?.requests.length, 0)
    // No session was made for it.
    const list = await runLathe(["session", "list"], {
      cwd: project,
      env: { ...env, LATHE_DATA_DIR: join(dir, "data") }
    })
    assert.notInclude(list.stdout, "ses_")
  })

  it("a PDF goes as a file part to a model the catalogue says takes PDFs, and is refused for one that does not", async () => {
    const { project, env } = await setup(answers("One page."))
    const pdf = Buffer.from("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
    writeFileSync(join(project, "doc.pdf"), pdf)
    ok(await runLathe(["run", "-f", "doc.pdf", "summarise"], { cwd: project, env }))
    assert.include(sent(), pdf.toString("base64"))
    const refused = await runLathe(["run", "-f", "doc.pdf", "summarise"], {
      cwd: project,
      env: { ...env, LATHE_MODEL: "deepseek-chat" }
    })
    assert.strictEqual(refused.code, 2, refused.stderr)
    assert.include(refused.stderr, "is not known to take PDFs")
    assert.strictEqual(server?.requests.length, 1)
  })

  it("a missing file: a clear error, exit 2, no request", async () => {
    const { project, env } = await setup(answers("never"))
    const run = await runLathe(["run", "-f", "nope.txt", "read it"], { cwd: project, env })
    assert.strictEqual(run.code, 2, run.stderr)
    assert.include(run.stderr, "-f nope.txt: no such file")
    assert.strictEqual(server?.requests.length, 0)
  })

  it("a file the read rules deny is refused", async () => {
    const { project, env } = await setup(answers("never"), "gpt-4o", { permission: { read: { "secret.txt": "deny" } } })
    writeFileSync(join(project, "secret.txt"), "hunter2\n")
    const run = await runLathe(["run", "--yes", "-f", "secret.txt", "read it"], { cwd: project, env })
    assert.strictEqual(run.code, 2, run.stderr)
    assert.include(run.stderr, "-f secret.txt: a read of it is denied by the permission rules")
    assert.strictEqual(server?.requests.length, 0)
  })

  it("a file outside the project asks as a read would: rejected without a terminal, attached with --yes", async () => {
    const { project, env, dir } = await setup([...answers("got it")])
    const outside = join(dir, "outside.txt")
    writeFileSync(outside, "from elsewhere\n")
    const refused = await runLathe(["run", "-f", outside, "read it"], { cwd: project, env })
    assert.strictEqual(refused.code, 2, refused.stderr)
    assert.include(refused.stderr, "needs permission (external_directory")
    assert.include(refused.stderr, `--allow "external_directory:${dir}/*"`)
    assert.strictEqual(server?.requests.length, 0)
    const allowed = await runLathe(["run", "--yes", "-f", outside, "read it"], { cwd: project, env })
    ok(allowed)
    assert.include(sent(), "from elsewhere")
  })
})

describe("lathe run --allow / --deny", () => {
  const bash = (command: string): ReadonlyArray<ScriptedReply> => [
    { steps: [{ tool: "bash", input: { command, description: "run it" } }] },
    { steps: [{ text: "finished" }] }
  ]

  it("--allow lets a bash command run without an ask, over the config's ask", async () => {
    const { project, env, dir } = await setup(bash("touch made-by-bash"), "m")
    // The person's own config (an untrusted project's ask narrows: it holds over --allow as over this file).
    mkdirSync(join(dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(dir, "config", "lathe", "lathe.json"), JSON.stringify({ permission: { bash: "ask" } }))
    const run = await runLathe(["run", "--format", "json", "--allow", "bash:touch *", "make a file"], {
      cwd: project,
      env
    })
    ok(run)
    assert.isTrue(existsSync(join(project, "made-by-bash")))
    assert.isFalse(run.events.some((e) => e.type === "permission.asked"))
  })

  it("--deny refuses a tool the config allows", async () => {
    const turns: ReadonlyArray<ScriptedReply> = [
      { steps: [{ tool: "write", input: { filePath: "out.txt", content: "hi" } }] },
      { steps: [{ text: "could not" }] }
    ]
    const { project, env } = await setup(turns, "m")
    const run = await runLathe(["run", "--format", "json", "--deny", "edit", "write a file"], { cwd: project, env })
    ok(run)
    assert.isFalse(existsSync(join(project, "out.txt")))
    const failed = run.events.find((e) => e.type === "tool.error")
    assert.match(failed?.type === "tool.error" && failed.state.status === "error" ? failed.state.error : "", /denied/i)
  })

  it("an ask only a person may approve stays so: --allow naming the exact line does not approve it", async () => {
    const line = "x=rm; $x a.txt"
    const { project, env } = await setup(bash(line), "m", { permission: { bash: { "*": "ask", "rm *": "deny" } } })
    writeFileSync(join(project, "a.txt"), "alpha\n")
    const run = await runLathe(["run", "--format", "json", "--allow", `bash:${line}`, "delete a"], {
      cwd: project,
      env
    })
    assert.strictEqual(run.code, 1, run.stderr)
    assert.isTrue(existsSync(join(project, "a.txt")))
    const asked = run.events.find((e) => e.type === "permission.asked")
    assert.strictEqual(asked?.type === "permission.asked" ? asked.metadata.requiresPerson : undefined, true)
  })

  it("a bad rule: a clear error naming the rule and the syntax, exit 2, no request", async () => {
    const { project, env } = await setup(answers("never"), "m")
    const run = await runLathe(["run", "--allow", "bash:", "go"], { cwd: project, env })
    assert.strictEqual(run.code, 2, run.stderr)
    assert.include(run.stderr, '--allow "bash:" is not a permission rule')
    assert.include(run.stderr, "<permission>[:<pattern>]")
    assert.strictEqual(server?.requests.length, 0)
  })
})

describe('lathe -f "prompt" (the interactive session)', () => {
  it("the first prompt carries the files; a missing one ends it at once with exit 2", async () => {
    // The session names itself with a second request (a title), answered by the same script.
    const { project, env } = await setup([...answers("Summarised."), ...answers("Notes")])
    writeFileSync(join(project, "notes.txt"), "remember the milk\n")
    writeFileSync(join(project, "pic.png"), PNG)
    const run = await runLathe(["-f", "notes.txt", "-f", "pic.png", "summarise"], { cwd: project, env })
    ok(run)
    const turn = server?.requests.map((_, n) => sent(n)).find((body) => body.includes("<file path")) ?? ""
    assert.include(turn, '<file path=\\"notes.txt\\">\\nremember the milk')
    assert.include(turn, "summarise")
    assert.include(turn, `data:image/png;base64,${PNG.toString("base64")}`)
    const requests = server?.requests.length
    const missing = await runLathe(["-f", "gone.txt", "summarise"], { cwd: project, env })
    assert.strictEqual(missing.code, 2, missing.stderr)
    assert.include(missing.stderr, "-f gone.txt: no such file")
    assert.strictEqual(server?.requests.length, requests)
  })
})
