import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as acp from "@agentclientprotocol/sdk"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { startAcpProcess } from "./acp-process.js"
import { sandbox } from "./helpers.js"

// `lathe acp` as an editor drives it: the SDK's client side talks to a real `lathe acp` process (from source) over
// its stdio, against the scripted model server. Every line the process writes to stdout must be a JSON-RPC message.

/** A stdio MCP server with a `ping` tool (@lathe/mcp's probe fixture). */
const probe = fileURLToPath(new URL("../../mcp/test/fixtures/probe-server.mjs", import.meta.url))

// A 1×1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

/** A `lathe acp` process and the client connected to it. */
interface Editor {
  readonly agent: acp.ClientContext
  /** Every `session/update`, in order. */
  readonly updates: Array<acp.SessionUpdate>
  /** Every `session/request_permission`, in order. */
  readonly asks: Array<acp.RequestPermissionRequest>
  /** What the process wrote to stdout and stderr so far. */
  readonly out: () => { readonly stdout: string; readonly stderr: string }
  /** Closes stdin and waits for the process to exit. */
  readonly close: () => Promise<number | null>
}

let server: ScriptedServer | undefined
const editors: Array<Editor> = []
afterEach(async () => {
  for (const editor of editors.splice(0)) await editor.close()
  await server?.close()
  server = undefined
})

/** Starts `lathe acp` in `cwd`; `answer` picks the option for each permission ask (default: allow once). */
const startEditor = (
  cwd: string,
  env: Record<string, string>,
  answer: (ask: acp.RequestPermissionRequest) => acp.RequestPermissionResponse = () => ({
    outcome: { outcome: "selected", optionId: "once" }
  })
): Editor => {
  const lathe = startAcpProcess(cwd, env)
  const updates: Array<acp.SessionUpdate> = []
  const asks: Array<acp.RequestPermissionRequest> = []
  const connection = acp
    .client({ name: "test-editor" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update)
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      asks.push(params)
      return answer(params)
    })
    .connect(lathe.stream)
  const editor: Editor = {
    agent: connection.agent,
    updates,
    asks,
    out: lathe.out,
    close: lathe.close
  }
  editors.push(editor)
  return editor
}

/** Fails unless `request` is refused with a JSON-RPC error whose message (or data) matches `pattern`. */
const rejects = async (request: Promise<unknown>, pattern: RegExp) => {
  try {
    await request
  } catch (error) {
    assert.match(`${(error as Error).message} ${JSON.stringify((error as { data?: unknown }).data)}`, pattern)
    return
  }
  assert.fail(`expected a refusal matching ${pattern}`)
}

/** Every stdout line of the process parses as a JSON-RPC 2.0 message. */
const assertPureStdout = (stdout: string) => {
  const lines = stdout.split("\n").filter((line) => line !== "")
  assert.isAbove(lines.length, 0)
  for (const line of lines) {
    let message: { jsonrpc?: unknown }
    try {
      message = JSON.parse(line) as { jsonrpc?: unknown }
    } catch {
      assert.fail(`a stdout line is not JSON: ${line}`)
    }
    assert.strictEqual(message.jsonrpc, "2.0", line)
  }
}

const initialize = (editor: Editor) =>
  editor.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }
  })

const project = (model = "gpt-4o") => {
  const box = sandbox()
  const env: Record<string, string> = { ...box.env, LATHE_BASE_URL: server?.url ?? "", LATHE_MODEL: model }
  return { ...box, env }
}

/** The body of the model server's request `index` (JSON), or an empty object before it came. */
const body = (index: number): { readonly model?: string; readonly messages?: unknown } =>
  (server?.requests[index]?.body ?? {}) as { readonly model?: string; readonly messages?: unknown }

/** The updates' kinds in order, with repeats of one kind in a row folded into one. */
const kinds = (updates: ReadonlyArray<acp.SessionUpdate>): Array<string> =>
  updates.map((u) => u.sessionUpdate).filter((kind, i, all) => kind !== all[i - 1])

// Each test starts \`lathe acp\` from source (one to three seconds on a quiet machine; two for the load test): room
// for a loaded CI machine.
describe("lathe acp", { timeout: 60_000 }, () => {
  it("initializes, opens a session and runs a prompt that reads, edits (asked and granted) and runs a command", async () => {
    server = await startScriptedServer([
      {
        steps: [
          { reasoning: "Look first." },
          { text: "Reading a.txt." },
          { tool: "read", input: { filePath: "a.txt" } }
        ]
      },
      { steps: [{ tool: "edit", input: { filePath: "a.txt", oldString: "hello", newString: "goodbye" } }] },
      { steps: [{ tool: "bash", input: { command: "cat a.txt", description: "Show a.txt" } }] },
      { steps: [{ text: "Changed it." }] }
    ])
    const box = project()
    writeFileSync(join(box.project, "a.txt"), "hello\n")
    // Edits and commands ask (the person's own config), so both go to the editor.
    mkdirSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe"), { recursive: true })
    writeFileSync(
      join(box.env.XDG_CONFIG_HOME ?? "", "lathe", "lathe.json"),
      JSON.stringify({ permission: { edit: "ask", bash: "ask" } })
    )
    const editor = startEditor(box.project, box.env)
    const init = await initialize(editor)
    assert.strictEqual(init.protocolVersion, acp.PROTOCOL_VERSION)
    assert.isTrue(init.agentCapabilities?.loadSession)
    assert.isTrue(init.agentCapabilities?.promptCapabilities?.image, "gpt-4o takes images")
    assert.isTrue(init.agentCapabilities?.promptCapabilities?.embeddedContext)
    assert.deepInclude(init.agentCapabilities?.mcpCapabilities ?? {}, { http: true })
    assert.strictEqual(init.agentInfo?.name, "lathe")

    const session = await editor.agent.request(acp.methods.agent.session.new, { cwd: box.project, mcpServers: [] })
    const modes = session.modes?.availableModes.map((m) => m.id) ?? []
    assert.include(modes, "build")
    assert.include(modes, "plan")
    assert.strictEqual(session.modes?.currentModeId, "build")
    const model = session.configOptions?.find((o) => o.category === "model")
    assert.strictEqual(model?.type === "select" ? model.currentValue : undefined, "env/gpt-4o")

    const done = await editor.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "change hello to goodbye in a.txt" }]
    })
    assert.strictEqual(done.stopReason, "end_turn")
    assert.strictEqual(readFileSync(join(box.project, "a.txt"), "utf8"), "goodbye\n")

    // The edit was put to the editor, with its diff, and granted.
    const edit = editor.asks.find((ask) => ask.toolCall.kind === "edit")
    assert.isDefined(edit, JSON.stringify(editor.asks))
    assert.deepEqual(
      edit?.options.map((o) => o.kind),
      ["allow_once", "allow_always", "reject_once"]
    )
    assert.isDefined(
      editor.asks.find((ask) => ask.toolCall.kind === "execute"),
      "the command was asked"
    )
    const askDiff = edit?.toolCall.content?.find((c) => c.type === "diff")
    assert.deepInclude(askDiff ?? {}, { path: join(box.project, "a.txt"), oldText: "hello", newText: "goodbye" })

    const updates = editor.updates.filter((u) => u.sessionUpdate !== "available_commands_update")
    const order = kinds(updates)
    assert.deepEqual(order.slice(0, 3), ["agent_thought_chunk", "agent_message_chunk", "tool_call"], order.join(" "))
    assert.strictEqual(order.at(-1), "agent_message_chunk")
    const text = (kind: "agent_thought_chunk" | "agent_message_chunk") =>
      updates
        .flatMap((u) =>
          (u.sessionUpdate === "agent_thought_chunk" || u.sessionUpdate === "agent_message_chunk") &&
          u.sessionUpdate === kind &&
          u.content.type === "text"
            ? [u.content.text]
            : []
        )
        .join("")
    assert.strictEqual(text("agent_thought_chunk"), "Look first.")
    assert.strictEqual(text("agent_message_chunk"), "Reading a.txt.Changed it.")

    // Each call: announced once, then updated to its end, in the order the model made them.
    const calls = updates.flatMap((u) => (u.sessionUpdate === "tool_call" ? [u] : []))
    assert.deepEqual(
      calls.map((c) => c.kind),
      ["read", "edit", "execute"]
    )
    const last = (id: string) =>
      updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === id).at(-1) as
        | (acp.ToolCallUpdate & { sessionUpdate: "tool_call_update" })
        | undefined
    for (const call of calls) assert.strictEqual(last(call.toolCallId)?.status, "completed", call.title)
    const read = calls[0]
    assert.deepEqual(last(read?.toolCallId ?? "")?.locations, [{ path: join(box.project, "a.txt"), line: 1 }])
    const edited = last(calls[1]?.toolCallId ?? "")
    assert.deepInclude(edited?.locations?.[0] ?? {}, { path: join(box.project, "a.txt"), line: 1 })
    assert.deepInclude(edited?.content?.[0] ?? {}, {
      type: "diff",
      path: join(box.project, "a.txt"),
      oldText: "hello",
      newText: "goodbye"
    })
    const ran = last(calls[2]?.toolCallId ?? "")
    const output = ran?.content?.[0]
    assert.include(output?.type === "content" && output.content.type === "text" ? output.content.text : "", "goodbye")
    assertPureStdout(editor.out().stdout)
    assert.strictEqual(await editor.close(), 0)
  })

  it("sends the todo list as a plan, the commands as available commands, runs /command and switches the model", async () => {
    server = await startScriptedServer([
      {
        steps: [
          {
            tool: "todowrite",
            input: {
              todos: [
                { content: "Read the code", status: "completed", priority: "high" },
                { content: "Fix the bug", status: "in_progress", priority: "medium" },
                { content: "Write a test", status: "pending", priority: "low" }
              ]
            }
          }
        ]
      },
      { steps: [{ text: "Planned." }] },
      { steps: [{ text: "LOUD" }] }
    ])
    const box = project()
    mkdirSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe", "commands"), { recursive: true })
    writeFileSync(
      join(box.env.XDG_CONFIG_HOME ?? "", "lathe", "commands", "shout.md"),
      "---\ndescription: Shout a word\n---\nSay $ARGUMENTS loudly.\n"
    )
    const editor = startEditor(box.project, box.env)
    await initialize(editor)
    const session = await editor.agent.request(acp.methods.agent.session.new, { cwd: box.project, mcpServers: [] })
    const commands = async () => {
      for (let tries = 0; tries < 200; tries++) {
        const update = editor.updates.find((u) => u.sessionUpdate === "available_commands_update")
        if (update?.sessionUpdate === "available_commands_update") return update.availableCommands
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      return []
    }
    assert.deepInclude(await commands(), { name: "shout", description: "Shout a word" })

    await editor.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "plan the fix" }]
    })
    const plan = editor.updates.find((u) => u.sessionUpdate === "plan")
    assert.deepEqual(plan?.sessionUpdate === "plan" ? plan.entries : undefined, [
      { content: "Read the code", status: "completed", priority: "high" },
      { content: "Fix the bug", status: "in_progress", priority: "medium" },
      { content: "Write a test", status: "pending", priority: "low" }
    ])

    const picked = await editor.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId: session.sessionId,
      configId: "model",
      value: "env/other-model"
    })
    const model = picked.configOptions.find((o) => o.id === "model")
    assert.strictEqual(model?.type === "select" ? model.currentValue : undefined, "env/other-model")
    await editor.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "/shout hello" }]
    })
    assert.strictEqual(body(2).model, "other-model")
    assert.include(JSON.stringify(body(2).messages), "Say hello loudly.")
    assertPureStdout(editor.out().stdout)
  })

  it("puts a person-only ask to the editor and never approves it itself; a rejection stops the write", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "write", input: { filePath: "lathe.json", content: '{ "permission": { "*": "allow" } }' } }] },
      { steps: [{ text: "Could not write it." }] }
    ])
    const box = project()
    const editor = startEditor(box.project, box.env, () => ({ outcome: { outcome: "selected", optionId: "reject" } }))
    await initialize(editor)
    const session = await editor.agent.request(acp.methods.agent.session.new, { cwd: box.project, mcpServers: [] })
    const done = await editor.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "allow everything" }]
    })
    assert.strictEqual(done.stopReason, "end_turn")
    const ask = editor.asks.find((a) => a._meta?.["lathe/requiresPerson"] === true)
    assert.isDefined(ask, JSON.stringify(editor.asks))
    assert.include(ask?.toolCall.title ?? "", "protected_path")
    assert.isFalse(existsSync(join(box.project, "lathe.json")))
    const failed = editor.updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed")
    assert.isDefined(failed)
  })

  it("says how to set a key when the model's provider has none", async () => {
    const box = sandbox()
    const editor = startEditor(box.project, { ...box.env, LATHE_MODEL: "anthropic/claude-sonnet-4-5" })
    const init = await initialize(editor)
    assert.deepEqual(
      init.authMethods?.map((m) => m.id),
      ["lathe-auth-login"]
    )
    await rejects(
      editor.agent.request(acp.methods.agent.session.new, { cwd: box.project, mcpServers: [] }),
      /lathe auth login/
    )
    await rejects(editor.agent.request(acp.methods.agent.authenticate, { methodId: "lathe-auth-login" }), /API key/)
    assertPureStdout(editor.out().stdout)
  })

  it("starts the editor's MCP servers for the session; their tools reach the model", async () => {
    const offers = (request: RecordedRequest) =>
      JSON.stringify((request.body as { tools?: unknown }).tools ?? []).includes('"name":"editor_ping"')
    const ponged = (request: RecordedRequest) => JSON.stringify(request.body).includes("pong")
    server = await startScriptedServer((request) =>
      ponged(request)
        ? { steps: [{ text: "pong it is" }] }
        : offers(request)
          ? { steps: [{ tool: "editor_ping", input: {} }] }
          : { steps: [{ text: "not yet" }] }
    )
    const box = project()
    const editor = startEditor(box.project, box.env)
    await initialize(editor)
    const session = await editor.agent.request(acp.methods.agent.session.new, {
      cwd: box.project,
      mcpServers: [{ name: "editor", command: process.execPath, args: [probe], env: [] }]
    })
    // The server's tools join once it has connected (the session opens at once).
    for (let tries = 0; tries < 40 && !server.requests.some(ponged); tries++) {
      await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "ping" }]
      })
      if (!server.requests.some(ponged)) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.isTrue(server.requests.some(ponged), "the editor's MCP server's tool ran")
    assertPureStdout(editor.out().stdout)
  })

  it("ends a turn at the step cap with stopReason max_turn_requests", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "read", input: { filePath: "a.txt" } }] },
      { steps: [{ tool: "read", input: { filePath: "a.txt" } }] },
      { steps: [{ text: "never reached" }] }
    ])
    const box = project()
    writeFileSync(join(box.project, "a.txt"), "hello\n")
    mkdirSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe"), { recursive: true })
    writeFileSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe", "lathe.json"), JSON.stringify({ max_steps: 1 }))
    const editor = startEditor(box.project, box.env)
    await initialize(editor)
    const session = await editor.agent.request(acp.methods.agent.session.new, { cwd: box.project, mcpServers: [] })
    const done = await editor.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "read forever" }]
    })
    assert.strictEqual(done.stopReason, "max_turn_requests")
  })

  it("cancels a prompt mid-stream: the turn ends with stopReason cancelled", async () => {
    server = await startScriptedServer([
      { steps: Array.from({ length: 200 }, (_, i) => ({ text: `word${i} ` })), delayMs: 50 }
    ])
    const box = project()
    const editor = startEditor(box.project, box.env)
    await initialize(editor)
    const session = await editor.agent.request(acp.methods.agent.session.new, { cwd: box.project, mcpServers: [] })
    const prompt = editor.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "talk for a long time" }]
    })
    while (!editor.updates.some((u) => u.sessionUpdate === "agent_message_chunk"))
      await new Promise((resolve) => setTimeout(resolve, 20))
    await editor.agent.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId })
    const done = await prompt
    assert.strictEqual(done.stopReason, "cancelled")
    assertPureStdout(editor.out().stdout)
  })

  it("loads a stored session and replays its history; modes switch the agent", async () => {
    server = await startScriptedServer([
      { steps: [{ text: "Looking." }, { tool: "read", input: { filePath: "a.txt" } }] },
      { steps: [{ text: "It says hello." }] },
      { steps: [{ text: "Planned." }] }
    ])
    const box = project()
    writeFileSync(join(box.project, "a.txt"), "hello\n")
    const first = startEditor(box.project, box.env)
    await initialize(first)
    const session = await first.agent.request(acp.methods.agent.session.new, { cwd: box.project, mcpServers: [] })
    await first.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "what is in a.txt?" }]
    })
    await first.close()

    const second = startEditor(box.project, box.env)
    await initialize(second)
    const loaded = await second.agent.request(acp.methods.agent.session.load, {
      sessionId: session.sessionId,
      cwd: box.project,
      mcpServers: []
    })
    assert.strictEqual(loaded.modes?.currentModeId, "build")
    const history = second.updates.filter((u) => u.sessionUpdate !== "available_commands_update")
    assert.deepEqual(kinds(history), ["user_message_chunk", "agent_message_chunk", "tool_call", "agent_message_chunk"])
    const user = history[0]
    assert.deepEqual(user?.sessionUpdate === "user_message_chunk" ? user.content : undefined, {
      type: "text",
      text: "what is in a.txt?"
    })
    const call = history.find((u) => u.sessionUpdate === "tool_call")
    assert.strictEqual(call?.sessionUpdate === "tool_call" ? call.status : undefined, "completed")

    // The plan mode: the next prompt runs with the plan agent.
    await second.agent.request(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "plan" })
    const done = await second.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "plan the next step" }]
    })
    assert.strictEqual(done.stopReason, "end_turn")
    const sent = JSON.stringify(body(2).messages)
    assert.include(sent, "You are the plan agent")
    assert.notInclude(JSON.stringify(body(0).messages), "You are the plan agent")
    await rejects(
      second.agent.request(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "nope" }),
      /no primary agent "nope"/
    )
    assertPureStdout(second.out().stdout)
  })

  it("sends an image and an embedded file to the model as lathe run -f does", async () => {
    server = await startScriptedServer([{ steps: [{ text: "A pixel and a note." }] }])
    const box = project()
    const editor = startEditor(box.project, box.env)
    await initialize(editor)
    const session = await editor.agent.request(acp.methods.agent.session.new, { cwd: box.project, mcpServers: [] })
    mkdirSync(join(box.project, "docs"))
    writeFileSync(join(box.project, "docs", "linked.md"), "linked text\n")
    const done = await editor.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [
        { type: "text", text: "what are these?" },
        { type: "image", mimeType: "image/png", data: PNG },
        {
          type: "resource",
          resource: { uri: pathToFileURL(join(box.project, "note.md")).href, text: "unsaved note text" }
        },
        { type: "resource_link", name: "linked.md", uri: pathToFileURL(join(box.project, "docs", "linked.md")).href }
      ]
    })
    assert.strictEqual(done.stopReason, "end_turn")
    const sent = JSON.stringify(body(0).messages)
    assert.include(sent, `data:image/png;base64,${PNG}`)
    assert.include(sent, "The user attached note.md:")
    assert.include(sent, "unsaved note text")
    assert.include(sent, "linked text")
    assertPureStdout(editor.out().stdout)
  })

  it("refuses an image for a model that does not take images, with the reason", async () => {
    server = await startScriptedServer([{ steps: [{ text: "unused" }] }])
    const box = project("some-local-model")
    const editor = startEditor(box.project, box.env)
    const init = await initialize(editor)
    assert.isFalse(init.agentCapabilities?.promptCapabilities?.image)
    const session = await editor.agent.request(acp.methods.agent.session.new, { cwd: box.project, mcpServers: [] })
    await rejects(
      editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [
          { type: "text", text: "what is this?" },
          { type: "image", mimeType: "image/png", data: PNG }
        ]
      }),
      /does not take images/
    )
    assert.strictEqual(server.requests.length, 0)
  })

  it("keeps stdout pure under config warnings and a plugin that prints", async () => {
    server = await startScriptedServer([{ steps: [{ text: "Hi." }] }])
    const box = project()
    const plugin = join(box.dir, "noisy-plugin.mjs")
    writeFileSync(
      plugin,
      [
        'console.log("plugin says hello on stdout")',
        "export default {",
        "  setup: async () => {",
        '    process.stdout.write("raw plugin write\\n")',
        '    return { "system.transform": async () => { console.log("noisy transform") } }',
        "  }",
        "}"
      ].join("\n")
    )
    mkdirSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe"), { recursive: true })
    writeFileSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe", "lathe.json"), JSON.stringify({ plugin: [plugin] }))
    // An untrusted project's plugin is ignored, with a warning.
    writeFileSync(join(box.project, "lathe.json"), JSON.stringify({ plugin: ["./never.mjs"] }))
    const editor = startEditor(box.project, box.env)
    await initialize(editor)
    const session = await editor.agent.request(acp.methods.agent.session.new, { cwd: box.project, mcpServers: [] })
    const done = await editor.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "hello" }]
    })
    assert.strictEqual(done.stopReason, "end_turn")
    await editor.close()
    const { stdout, stderr } = editor.out()
    assertPureStdout(stdout)
    assert.include(stderr, "plugin says hello on stdout")
    assert.include(stderr, "raw plugin write")
    assert.include(stderr, "noisy transform")
    assert.match(stderr, /untrusted/i)
  })
})
