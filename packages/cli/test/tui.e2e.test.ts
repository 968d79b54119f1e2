import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type RecordedRequest, type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { closeAll, quit, spawnTerminal } from "./pty.js"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

let server: ScriptedServer | undefined
afterEach(async () => {
  await closeAll()
  await server?.close()
  server = undefined
})

const isTitleRequest = (request: RecordedRequest) => JSON.stringify(request.body).includes("Write a title for this")

/** A scripted model: title requests get a title; every other request the next reply of `replies`. */
const setup = async (replies: ReadonlyArray<ScriptedReply>) => {
  let next = 0
  server = await startScriptedServer((request) =>
    isTitleRequest(request) ? { steps: [{ text: "Greeting and a fix" }] } : replies[next++]
  )
  const box = sandbox()
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  // Edits are allowed by default; this project asks (config may always narrow what Lathe does).
  writeFileSync(join(box.project, "lathe.json"), JSON.stringify({ permission: { edit: "ask" } }))
  const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
  return { ...box, env, server }
}

const lathe = (cwd: string, env: Record<string, string>, args: ReadonlyArray<string> = []) =>
  spawnTerminal({
    command: process.execPath,
    args: ["--conditions=@lathe/source", "--import", tsx, bin, ...args],
    cwd,
    env
  })

/** Polls `check` until it holds (10 s at most); the error shows `describe()`. */
const until = async (check: () => boolean, describe: () => string) => {
  const end = Date.now() + 10_000
  while (!check()) {
    if (Date.now() > end) throw new Error(`condition not met; screen:\n${describe()}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const slowText = Array.from({ length: 60 }, (_, i) => ({ text: `word${i} ` }))

describe("lathe (interactive, end to end)", () => {
  it("forgets a first Ctrl+C after two seconds even while a turn streams (a later one does not quit)", {
    timeout: 60_000
  }, async () => {
    const { project, env } = await setup([{ steps: slowText, delayMs: 150 }])
    const term = lathe(project, env)
    let exited = false
    void term.exited.then(() => {
      exited = true
    })
    await term.waitFor("ready", 30_000)
    await term.type("talk slowly")
    term.press("enter")
    await term.waitFor("word2 ")
    term.press("ctrl-c")
    await term.waitFor("Ctrl+C again")
    // The spinner redraws all along; the hint still goes after ARM_MS (2 s).
    await until(
      () => !term.screen().includes("Ctrl+C again"),
      () => term.screen()
    )
    term.press("ctrl-c")
    await term.waitFor("Ctrl+C again")
    assert.isFalse(exited, "one Ctrl+C after the hint went does not quit")
    assert.strictEqual(await quit(term), 0)
  })

  it("a whole session: streamed answer, an ask answered 'always', the diff, /undo, Esc, quit, --continue", {
    timeout: 90_000
  }, async () => {
    const { project, env } = await setup([
      { steps: [{ text: "Hello from the **model**." }] },
      { steps: [{ tool: "edit", input: { filePath: "a.txt", oldString: "alpha", newString: "ALPHA" } }] },
      { steps: [{ text: "Changed a.txt." }] },
      { steps: slowText, delayMs: 150 }
    ])
    const term = lathe(project, env)
    await term.waitFor("ready", 30_000)

    await term.type("say hello")
    term.press("enter")
    await term.waitFor("Hello from the model.")
    assert.notInclude(term.screen(), "**model**", "markdown is rendered, not shown raw")

    await term.type("fix a")
    term.press("enter")
    await term.waitFor("Permission")
    // The dialog can arrive over more than one frame: its choices line may follow its title.
    await term.waitFor("[a]lways")
    assert.match(term.screen(), /a\.txt/)
    assert.include(term.screen(), "[a]lways")
    term.write("a")
    await term.waitFor("Changed a.txt.")
    // The answer shows before the turn ends (the edit step's patch may still be being stored): /undo waits for "ready".
    await term.waitFor(/\bready\s*$/m)
    const afterEdit = term.screen()
    assert.match(afterEdit, /- alpha/)
    assert.match(afterEdit, /\+ ALPHA/)
    assert.strictEqual(readFileSync(join(project, "a.txt"), "utf8"), "ALPHA\n")

    await term.type("/undo")
    await term.waitFor("Take back the last turn") // the command palette lists it
    term.press("enter")
    await term.waitFor("Restored 1 file")
    assert.strictEqual(readFileSync(join(project, "a.txt"), "utf8"), "alpha\n")

    await term.type("go slowly")
    term.press("enter")
    await term.waitFor("word3 ")
    term.press("escape")
    await term.waitFor("interrupted")
    await term.waitFor("ready")
    assert.notInclude(term.screen(), "word59")

    assert.strictEqual(await quit(term), 0)

    const again = lathe(project, env, ["--continue"])
    await again.waitFor("ready", 30_000)
    const resumed = again.screen()
    assert.include(resumed, "go slowly")
    assert.include(resumed, "word3")
    assert.include(resumed, "interrupted")
    again.press("pageup")
    again.press("pageup")
    await again.waitFor("Hello from the model.")
    assert.strictEqual(await quit(again), 0)
  })

  it("the editor: / palette and a custom command, @file completion attaches it, !shell, queueing, history, paste, Tab, /cost, /export, resize", {
    timeout: 90_000
  }, async () => {
    const bodies: Array<string> = []
    server = await startScriptedServer((request) => {
      if (isTitleRequest(request)) return { steps: [{ text: "Editor features" }] }
      const body = JSON.stringify(request.body)
      bodies.push(body)
      const messages = (request.body as { messages?: ReadonlyArray<unknown> }).messages ?? []
      const last = JSON.stringify(messages.at(-1))
      if (last.includes("Review src/greet.ts carefully")) return { steps: [{ text: "Reviewed." }] }
      if (last.includes('<file path=\\"src/greet.ts\\">')) return { steps: [{ text: "Got the file." }] }
      if (last.includes("The user ran a shell command themselves"))
        return { steps: [{ text: "Saw your shell output." }] }
      if (last.includes("slow one"))
        return { steps: Array.from({ length: 30 }, (_, i) => ({ text: `s${i} ` })), delayMs: 60 }
      if (last.includes("queued next")) return { steps: [{ text: "Queued ran." }] }
      if (last.includes("pasted line 9")) return { steps: [{ text: "Got the paste." }] }
      return { steps: [{ text: "ok" }] }
    })
    const box = sandbox()
    mkdirSync(join(box.project, "src"))
    writeFileSync(join(box.project, "src/greet.ts"), "export const greet = 1\n")
    mkdirSync(join(box.project, ".lathe/commands"), { recursive: true })
    writeFileSync(
      join(box.project, ".lathe/commands/review.md"),
      "---\ndescription: Review a file\n---\nReview $ARGUMENTS carefully.\n"
    )
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
    const term = lathe(box.project, env)
    await term.waitFor("ready", 30_000)

    await term.type("/")
    await term.waitFor("/undo")
    await term.type("rev")
    await term.waitForGone("/undo")
    await term.waitFor("Review a file")
    term.press("tab")
    await term.type("src/greet.ts")
    term.press("enter")
    await term.waitFor("Reviewed.")

    await term.type("look at @gre")
    await term.waitFor("@src/greet.ts")
    term.press("tab")
    term.press("enter")
    await term.waitFor("Got the file.")
    assert.include(term.screen(), "+ src/greet.ts")

    await term.type("!echo shell-works")
    term.press("enter")
    await term.waitFor("(exit 0)")
    assert.include(term.screen(), "shell-works")
    await term.type("what did it say")
    term.press("enter")
    await term.waitFor("Saw your shell output.")

    await term.type("slow one")
    term.press("enter")
    await term.waitFor("s2 ")
    await term.type("queued next")
    term.press("enter")
    await term.waitFor("queued: queued next")
    await term.waitFor("Queued ran.", 20_000)

    // The prompt editor is the line above the footer.
    const editorLine = () => (term.screen().split("\n").at(-2) ?? "").trimEnd()
    term.press("up")
    await until(
      () => editorLine() === "› queued next",
      () => term.screen()
    )
    term.press("ctrl-c") // clears the prompt
    await until(
      () => editorLine().includes("Ask Lathe"),
      () => term.screen()
    )

    term.paste(Array.from({ length: 10 }, (_, i) => `pasted line ${i}`).join("\n"))
    await term.waitFor("[Pasted text #1 +10 lines]")
    term.press("enter")
    await term.waitFor("Got the paste.")
    assert.include(bodies.at(-1) ?? "", "pasted line 0")

    term.press("tab")
    await term.waitFor(/^plan · /m)

    await term.type("/cost")
    await term.waitFor("Tokens and cost of this session") // the palette's only match; Enter runs it
    term.press("enter")
    await term.waitFor("total: in")

    await term.type("/export")
    await term.waitFor("Write this session as Markdown")
    term.press("enter")
    // Into Lathe's data folder, never the project (it would show in git status).
    await term.waitFor("Wrote /")
    const exports = join(box.env.LATHE_DATA_DIR ?? "", "exports")
    const exported = readdirSync(exports).find((f) => f.startsWith("ses_"))
    assert.isDefined(exported)
    assert.include(readFileSync(join(exports, exported ?? ""), "utf8"), "Got the paste.")
    assert.isUndefined(readdirSync(box.project).find((f) => f.endsWith(".md")))

    term.resize(100, 30)
    await term.waitFor(/^─{100}$/m) // the editor's rule spans the new width
    await until(
      () => /ready$/.test(term.screen().split("\n").at(-1) ?? ""),
      () => term.screen()
    )
    assert.strictEqual(term.screen().split("\n").length, 30)
    assert.match(term.screen().split("\n").at(-1) ?? "", /ready$/)
    assert.strictEqual(await quit(term), 0)
    assert.isTrue(existsSync(join(box.env.LATHE_DATA_DIR ?? "", "history")), "prompt history is kept per project")
  })

  it("without a terminal: plain lines in, plain lines out, no escape codes", { timeout: 60_000 }, async () => {
    const { project, env } = await setup([{ steps: [{ text: "Hello from the **model**." }] }])
    const child = spawn(process.execPath, ["--conditions=@lathe/source", "--import", tsx, bin], {
      cwd: project,
      env: { ...env, TERM: "dumb" },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
    })
    child.stdin.end("say hello\n/cost\n")
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    assert.strictEqual(code, 0, out)
    assert.include(out, "Hello from the **model**.")
    assert.include(out, "total: in")
    assert.notInclude(out, "\u001b")
  })

  it("without a terminal, a failure makes the exit status 1: no model configured", { timeout: 60_000 }, async () => {
    const box = sandbox()
    const child = spawn(process.execPath, ["--conditions=@lathe/source", "--import", tsx, bin], {
      cwd: box.project,
      env: { ...box.env, TERM: "dumb" },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let out = ""
    for (const stream of [child.stdout, child.stderr])
      stream.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
      })
    child.stdin.end("say hello\n")
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    assert.strictEqual(code, 1, out)
    assert.include(out, "No model provider is configured.")
  })

  it("asks and commands: reject with a message, a question, Esc twice on a running command, /compact, /new, /sessions, /agents, /models, /help, /init", {
    timeout: 90_000
  }, async () => {
    const bodies: Array<string> = []
    let titles = 0
    server = await startScriptedServer((request) => {
      if (isTitleRequest(request)) return { steps: [{ text: titles++ === 0 ? "Colors session" : "Init session" }] }
      const body = JSON.stringify(request.body)
      bodies.push(body)
      const messages = (request.body as { messages?: ReadonlyArray<unknown> }).messages ?? []
      const last = JSON.stringify(messages.at(-1))
      if (body.includes("You summarise a coding session")) return { steps: [{ text: "Summary of it all." }] }
      if (last.includes("use the other file")) return { steps: [{ text: "OK, the other file." }] }
      if (last.includes("edit please"))
        return { steps: [{ tool: "edit", input: { filePath: "a.txt", oldString: "alpha", newString: "beta" } }] }
      if (last.includes("Blue")) return { steps: [{ text: "You chose Blue." }] }
      if (last.includes("ask me"))
        return {
          steps: [
            {
              tool: "question",
              input: { questions: [{ question: "Which color?", options: [{ label: "Red" }, { label: "Blue" }] }] }
            }
          ]
        }
      if (last.includes("run slow"))
        return { steps: [{ tool: "bash", input: { command: "sleep 8; echo finished", description: "Sleep a while" } }] }
      if (last.includes("Write an AGENTS.md")) return { steps: [{ text: "Wrote it." }] }
      return { steps: [{ text: "ok" }] }
    })
    const box = sandbox()
    writeFileSync(join(box.project, "a.txt"), "alpha\n")
    writeFileSync(join(box.project, "lathe.json"), JSON.stringify({ permission: { edit: "ask" } }))
    // The user's own config is trusted: it may allow the question tool.
    mkdirSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe"), { recursive: true })
    writeFileSync(
      join(box.env.XDG_CONFIG_HOME ?? "", "lathe/lathe.json"),
      JSON.stringify({ permission: { question: "allow" } })
    )
    const trace = join(box.dir, "tui-trace.log")
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model", LATHE_TUI_TRACE: trace }
    const term = lathe(box.project, env)
    await term.waitFor("ready", 30_000)

    await term.type("edit please")
    term.press("enter")
    await term.waitFor("[a]lways")
    await term.type("use the other file")
    await term.waitFor("reject, because: use the other file")
    term.press("enter")
    await term.waitFor("OK, the other file.")
    assert.strictEqual(readFileSync(join(box.project, "a.txt"), "utf8"), "alpha\n")

    await term.type("ask me")
    term.press("enter")
    await term.waitFor("Which color?")
    await term.waitFor("2. Blue")
    await term.type("2")
    term.press("enter")
    await term.waitFor("You chose Blue.")

    await term.type("run slow")
    term.press("enter")
    await term.waitFor(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash Sleep a while/) // running, not just streamed in
    term.press("escape")
    await term.waitFor("press Esc again")
    term.press("escape")
    await term.waitFor("interrupted")
    await term.waitFor("ready")
    assert.notInclude(term.screen(), "finished")

    await term.type("/compact")
    await term.waitFor("Summarise the history now")
    term.press("enter")
    await term.waitFor("history summarised")
    await term.waitFor("ready")

    await term.type("/help")
    await term.waitFor("Keys and commands")
    term.press("enter")
    await term.waitFor("Keys: Enter send")

    // /new clears the transcript (the help list goes). The palette's line (label, two spaces, description) is waited
    // for, then for it to go (Enter taken): the help list above also says "Start a new session", and the palette
    // alone can push the help list off the screen. (A CI run once had /new refused as busy: the /init typed after it
    // had overtaken it while /new's history line was written; the trace below showed it.)
    await term.type("/new")
    await term.waitFor("/new  Start a new session")
    term.press("enter")
    await term.waitForGone("/new  Start a new session")
    await term.waitForGone("Keys: Enter send")
    assert.notInclude(term.screen(), "Wait for the turn to end", readFileSync(trace, "utf8"))
    assert.notInclude(term.screen(), "You chose Blue.")
    await term.type("/init")
    await term.waitFor("AGENTS.md for this project")
    term.press("enter")
    await term.waitFor("Wrote it.")
    assert.include(bodies.at(-1) ?? "", "Write an AGENTS.md")

    await term.type("/sessions")
    await term.waitFor("Pick an earlier session")
    term.press("enter")
    await term.waitFor("type to filter")
    await term.waitFor("Init session")
    await term.waitFor("Colors session")
    await term.type("colors")
    await term.waitForGone("Init session")
    term.press("enter")
    await term.waitFor("You chose Blue.")

    await term.type("/agents")
    await term.waitFor("Switch the primary agent")
    term.press("enter")
    await term.waitFor("type to filter")
    await term.type("plan")
    term.press("enter")
    await term.waitFor(/^plan · /m)

    await term.type("/models")
    await term.waitFor("Switch the model")
    term.press("enter")
    await term.waitFor("env/test-model  (current)")
    term.press("escape")
    await term.waitForGone("type to filter")
    assert.strictEqual(await quit(term), 0)
  })

  it("with no model configured it opens anyway and says how to set one up", { timeout: 60_000 }, async () => {
    const box = sandbox()
    const term = lathe(box.project, box.env)
    await term.waitFor("Lathe needs one model", 30_000)
    await term.waitFor("no model")
    await term.type("hello")
    term.press("enter")
    await term.waitFor(/ANTHROPIC_API_KEY/)
    assert.strictEqual(await quit(term), 0)
  })

  it("in an untrusted folder whose config asks for more, it offers to trust it", { timeout: 60_000 }, async () => {
    const { project, env } = await setup([{ steps: [{ text: "ok" }] }])
    writeFileSync(join(project, "lathe.json"), JSON.stringify({ permission: { webfetch: "allow" } }))
    const term = lathe(project, env)
    await term.waitFor("Trust this folder?", 30_000)
    assert.match(term.screen(), /permission allow rules \(webfetch: \*\)/)
    term.write("y")
    await term.waitFor("Trusted")
    await term.waitForGone("Trust this folder?")
    assert.strictEqual(await quit(term), 0)
    const check = await runLathe(["trust", "--check"], { cwd: project, env })
    assert.strictEqual(check.code, 0, check.stdout + check.stderr)
    const again = lathe(project, env)
    await again.waitFor("ready", 30_000)
    assert.notInclude(again.screen(), "Trust this folder?")
    assert.strictEqual(await quit(again), 0)
  })

  it("--agent and --model choose the agent and model in the footer", { timeout: 60_000 }, async () => {
    const { project, env } = await setup([{ steps: [{ text: "ok" }] }])
    const term = lathe(project, env, ["--agent", "plan", "--model", "env/other-model"])
    await term.waitFor(/^plan · env\/other-model · /m, 30_000)
    assert.strictEqual(await quit(term), 0)
  })
})
