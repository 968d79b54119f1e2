import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as acp from "@agentclientprotocol/sdk"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { startAcpProcess } from "./acp-process.js"
import { runLathe, sandbox } from "./helpers.js"

// `lathe acp` with an editor that offers its buffers (`fs`) and its terminal: the SDK's client side plays the editor,
// keeping an unsaved buffer, saving what the agent writes, and running commands in "terminals" that are real processes
// it spawns itself, against the scripted model server.

/** Whether bubblewrap works here: then bash's commands reach the editor's terminal inside it. */
const bwrap = spawnSync("bwrap", ["--ro-bind", "/", "/", "true"]).status === 0

/** What the editor saw, in order: asks, reads, writes and terminals. */
type Seen =
  | { readonly type: "ask"; readonly kind: string | null | undefined }
  | { readonly type: "read"; readonly path: string }
  | { readonly type: "write"; readonly path: string; readonly content: string }
  | { readonly type: "terminal"; readonly request: acp.CreateTerminalRequest }

interface Editor {
  readonly agent: acp.ClientContext
  readonly updates: Array<acp.SessionUpdate>
  readonly seen: Array<Seen>
  readonly out: () => { readonly stdout: string; readonly stderr: string }
  readonly close: () => Promise<number | null>
}

let server: ScriptedServer | undefined
const editors: Array<Editor> = []
afterEach(async () => {
  for (const editor of editors.splice(0)) await editor.close()
  await server?.close()
  server = undefined
})

/** One command the editor runs for the agent: a real process, its output gathered. */
interface Terminal {
  readonly child: ChildProcess
  output: string
  readonly exited: Promise<acp.WaitForTerminalExitResponse>
}

/**
 * Starts `lathe acp` in `cwd` as an editor with the given capabilities would. `buffers` are unsaved editor buffers by
 * absolute path: reads of them return their text, not the disk's. Writes are saved to disk (as Zed does).
 */
const startEditor = (cwd: string, env: Record<string, string>, buffers: ReadonlyMap<string, string> = new Map()) => {
  const lathe = startAcpProcess(cwd, env)
  const updates: Array<acp.SessionUpdate> = []
  const seen: Array<Seen> = []
  const terminals = new Map<string, Terminal>()
  const terminal = (id: string): Terminal => {
    const found = terminals.get(id)
    if (!found) throw acp.RequestError.invalidParams(undefined, `no terminal ${id}`)
    return found
  }
  const connection = acp
    .client({ name: "test-editor" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update)
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      seen.push({ type: "ask", kind: params.toolCall.kind })
      return { outcome: { outcome: "selected", optionId: "once" } }
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      seen.push({ type: "read", path: params.path })
      return { content: buffers.get(params.path) ?? readFileSync(params.path, "utf8") }
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      seen.push({ type: "write", path: params.path, content: params.content })
      writeFileSync(params.path, params.content)
      return {}
    })
    .onRequest(acp.methods.client.terminal.create, ({ params }) => {
      seen.push({ type: "terminal", request: params })
      const run = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? cwd,
        env: Object.fromEntries((params.env ?? []).map((v) => [v.name, v.value])),
        stdio: ["ignore", "pipe", "pipe"]
      })
      const entry: Terminal = {
        child: run,
        output: "",
        exited: new Promise((resolve) =>
          run.on("close", (exitCode, signal) => resolve({ exitCode, signal: signal ?? null }))
        )
      }
      run.stdout?.on("data", (chunk: Buffer) => {
        entry.output += chunk.toString("utf8")
      })
      run.stderr?.on("data", (chunk: Buffer) => {
        entry.output += chunk.toString("utf8")
      })
      const terminalId = `term-${terminals.size + 1}`
      terminals.set(terminalId, entry)
      return { terminalId }
    })
    .onRequest(acp.methods.client.terminal.output, ({ params }) => ({
      output: terminal(params.terminalId).output,
      truncated: false
    }))
    .onRequest(acp.methods.client.terminal.waitForExit, ({ params }) => terminal(params.terminalId).exited)
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
      terminal(params.terminalId).child.kill("SIGKILL")
      return {}
    })
    .onRequest(acp.methods.client.terminal.release, ({ params }) => {
      terminal(params.terminalId).child.kill("SIGKILL")
      terminals.delete(params.terminalId)
      return {}
    })
    .connect(lathe.stream)
  const editor: Editor = {
    agent: connection.agent,
    updates,
    seen,
    out: lathe.out,
    close: lathe.close
  }
  editors.push(editor)
  return editor
}

const initialize = (editor: Editor, clientCapabilities: acp.ClientCapabilities) =>
  editor.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities })

/** A project whose person's config asks before edits and commands (so the asks' order shows). */
const project = () => {
  const box = sandbox()
  const env: Record<string, string> = { ...box.env, LATHE_BASE_URL: server?.url ?? "", LATHE_MODEL: "gpt-4o" }
  mkdirSync(join(env.XDG_CONFIG_HOME ?? "", "lathe"), { recursive: true })
  writeFileSync(
    join(env.XDG_CONFIG_HOME ?? "", "lathe", "lathe.json"),
    JSON.stringify({ permission: { edit: "ask", bash: "ask" } })
  )
  return { ...box, env }
}

/** Every request body the model server got, as one string. */
const sentToModel = (): string => JSON.stringify(server?.requests.map((r) => r.body) ?? [])

const prompt = async (editor: Editor, cwd: string, text: string) => {
  const session = await editor.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] })
  const done = await editor.agent.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text }]
  })
  return done.stopReason
}

describe("lathe acp: the editor's buffers and terminal", { timeout: 60_000 }, () => {
  it("reads an unsaved buffer and writes through the editor; the step's snapshot lets lathe undo restore", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "read", input: { filePath: "a.txt" } }] },
      { steps: [{ tool: "edit", input: { filePath: "a.txt", oldString: "from the buffer", newString: "edited" } }] },
      { steps: [{ text: "Edited the buffer." }] }
    ])
    const box = project()
    const file = join(box.project, "a.txt")
    writeFileSync(file, "hello from disk\n")
    const editor = startEditor(box.project, box.env, new Map([[file, "hello from the buffer\n"]]))
    await initialize(editor, { fs: { readTextFile: true, writeTextFile: true }, terminal: false })
    assert.strictEqual(await prompt(editor, box.project, "edit a.txt"), "end_turn")

    // The model read the buffer, not the disk; the edit matched the buffer's text and went through the editor.
    assert.include(sentToModel(), "hello from the buffer")
    assert.notInclude(sentToModel(), "hello from disk")
    assert.deepEqual(
      editor.seen.map((s) => s.type),
      ["read", "read", "ask", "write"]
    )
    assert.deepInclude(editor.seen.at(-1) ?? {}, { type: "write", path: file, content: "hello edited\n" })
    assert.strictEqual(readFileSync(file, "utf8"), "hello edited\n")
    assert.strictEqual(await editor.close(), 0)

    // The step's snapshot holds the edit the editor saved: undo brings back what the disk had before the turn.
    const undo = await runLathe(["undo"], { cwd: box.project, env: box.env })
    assert.strictEqual(undo.code, 0, undo.stderr)
    assert.strictEqual(readFileSync(file, "utf8"), "hello from disk\n")
  })

  it("runs bash in the editor's terminal, after the ask, with the sandbox's argv as the command", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "bash", input: { command: "echo hi from the terminal", description: "Say hi" } }] },
      { steps: [{ text: "Done." }] }
    ])
    const box = project()
    const editor = startEditor(box.project, box.env)
    await initialize(editor, { terminal: true })
    assert.strictEqual(await prompt(editor, box.project, "say hi"), "end_turn")

    assert.deepEqual(
      editor.seen.map((s) => s.type),
      ["ask", "terminal"]
    )
    const created = editor.seen[1]?.type === "terminal" ? editor.seen[1].request : undefined
    const argv = [created?.command ?? "", ...(created?.args ?? [])]
    assert.include(argv, "echo hi from the terminal")
    assert.strictEqual(created?.cwd, box.project)
    if (bwrap) {
      // bubblewrap's argv, its seccomp filter opened on fd 3 by the shell in front of it.
      assert.isTrue(
        argv.some((arg) => /bwrap$/.test(arg)),
        argv.join(" ")
      )
      assert.include(argv, "--die-with-parent")
      assert.include(argv, "--seccomp")
    }
    // The command's environment is the one Lathe gives its own commands.
    assert.deepInclude(created?.env ?? [], { name: "TERM", value: "dumb" })
    assert.include(sentToModel(), "hi from the terminal")
    // The call shows the terminal, while it runs and once it ended.
    const shown = editor.updates.filter(
      (u) => u.sessionUpdate === "tool_call_update" && u.content?.some((c) => c.type === "terminal")
    )
    assert.isAtLeast(shown.length, 2)
    assert.strictEqual(await editor.close(), 0)
  })

  it("without the capabilities Lathe reads the disk and runs the command itself", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "read", input: { filePath: "a.txt" } }] },
      { steps: [{ tool: "bash", input: { command: "echo ran by lathe", description: "Say it" } }] },
      { steps: [{ text: "Done." }] }
    ])
    const box = project()
    const file = join(box.project, "a.txt")
    writeFileSync(file, "hello from disk\n")
    const editor = startEditor(box.project, box.env, new Map([[file, "hello from the buffer\n"]]))
    await initialize(editor, { fs: { readTextFile: false, writeTextFile: false }, terminal: false })
    assert.strictEqual(await prompt(editor, box.project, "read and run"), "end_turn")
    assert.deepEqual(
      editor.seen.map((s) => s.type),
      ["ask"]
    )
    assert.include(sentToModel(), "hello from disk")
    assert.include(sentToModel(), "ran by lathe")
    assert.strictEqual(await editor.close(), 0)
  })
})
