import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { closeAll, quit, spawnTerminal } from "./pty.js"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")
const TOKEN = "attach-secret"

let model: ScriptedServer | undefined
let serve: ChildProcess | undefined
afterEach(async () => {
  await closeAll()
  if (serve && serve.exitCode === null) {
    const exited = new Promise((resolve) => serve?.once("exit", resolve))
    serve.kill("SIGKILL")
    await exited
  }
  serve = undefined
  await model?.close()
  model = undefined
})

/** A loopback port nothing listens on (taken, then released). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0))
    })
  })

const isTitleRequest = (request: RecordedRequest) => JSON.stringify(request.body).includes("Write a title for this")

/** A real `lathe serve --port 0 --token …` in a project that asks before edits; resolves with its address. */
const startServe = async (cwd: string, env: Record<string, string>): Promise<string> => {
  const child = spawn(
    process.execPath,
    ["--conditions=@lathe/source", "--import", tsx, bin, "serve", "--port", "0", "--token", TOKEN],
    { cwd, env, stdio: ["ignore", "pipe", "pipe"] }
  )
  serve = child
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  return new Promise((resolve, reject) => {
    let stdout = ""
    const timer = setTimeout(() => reject(new Error(`lathe serve did not start:\n${stdout}\n${stderr}`)), 30_000)
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1]
      if (url) {
        clearTimeout(timer)
        resolve(url)
      }
    })
    child.once("exit", (code) => reject(new Error(`lathe serve exited with ${code}:\n${stdout}\n${stderr}`)))
  })
}

describe("lathe --attach (the interactive UI on a lathe serve, end to end)", () => {
  it("prompt and streamed answer, an ask answered 'always' runs the tool on the server, /undo reverts there, quit", {
    timeout: 120_000
  }, async () => {
    const replies = [
      { steps: [{ text: "Hello from the **served** model." }] },
      { steps: [{ tool: "edit", input: { filePath: "a.txt", oldString: "alpha", newString: "ALPHA" } }] },
      { steps: [{ text: "Changed a.txt." }] },
      { steps: Array.from({ length: 40 }, (_, i) => ({ text: `w${i} ` })), delayMs: 100 },
      { steps: [{ text: "The queued one ran." }] }
    ]
    let next = 0
    model = await startScriptedServer((request) =>
      isTitleRequest(request) ? { steps: [{ text: "Attached session" }] } : replies[next++]
    )
    const box = sandbox()
    writeFileSync(join(box.project, "a.txt"), "alpha\n")
    writeFileSync(join(box.project, "lathe.json"), JSON.stringify({ permission: { edit: "ask" } }))
    const url = await startServe(box.project, { ...box.env, LATHE_BASE_URL: model.url, LATHE_MODEL: "test-model" })

    // The UI runs with no model configured on its side: everything it shows comes from the server.
    const term = spawnTerminal({
      command: process.execPath,
      args: ["--conditions=@lathe/source", "--import", tsx, bin, "--attach", url],
      cwd: box.project,
      env: { ...box.env, LATHE_SERVER_TOKEN: TOKEN }
    })
    await term.waitFor("ready", 30_000)
    assert.include(term.screen(), `attached: ${new URL(url).host}`)

    await term.type("say hello")
    term.press("enter")
    await term.waitFor("Hello from the served model.")

    await term.type("fix a")
    term.press("enter")
    await term.waitFor("Permission")
    assert.include(term.screen(), "[a]lways")
    term.write("a")
    await term.waitFor("Changed a.txt.")
    // The answer shows before the turn ends (the edit step's patch may still be being stored): /undo waits for "ready".
    await term.waitFor(/\bready\s*$/m)
    assert.strictEqual(readFileSync(join(box.project, "a.txt"), "utf8"), "ALPHA\n")

    await term.type("/undo")
    await term.waitFor("Take back the last turn") // the command palette lists it
    term.press("enter")
    await term.waitFor("Restored 1 file")
    assert.strictEqual(readFileSync(join(box.project, "a.txt"), "utf8"), "alpha\n")

    await term.type("!ls")
    term.press("enter")
    await term.waitFor("not available when attached")

    // A prompt typed while a turn runs goes to the server, which runs it after that turn.
    await term.type("go slowly")
    term.press("enter")
    await term.waitFor("w3 ")
    await term.type("then this")
    term.press("enter")
    await term.waitFor("The queued one ran.", 20_000)
    await term.waitFor("ready")
    assert.notInclude(term.screen(), "queued: then this", "the UI's own queue is not used when attached")

    assert.strictEqual(await quit(term), 0)
    // The model was called for each turn by the server (titles aside), the queued prompt's included.
    assert.strictEqual(next, 5)

    // -c resumes the server's latest session: its history comes from the server.
    const again = spawnTerminal({
      command: process.execPath,
      args: ["--conditions=@lathe/source", "--import", tsx, bin, "--attach", url, "--token", TOKEN, "-c"],
      cwd: box.project,
      env: box.env
    })
    await again.waitFor("ready", 30_000)
    await again.waitFor("The queued one ran.")
    assert.strictEqual(await quit(again), 0)
  })

  it("a server that cannot be reached, or refuses the token, ends lathe with a message and exit 1", {
    timeout: 60_000
  }, async () => {
    const box = sandbox()
    const url = await startServe(box.project, { ...box.env, LATHE_BASE_URL: "http://127.0.0.1:9", LATHE_MODEL: "m" })
    // Another data dir: the server saved its token in this one, where `--attach` would find it.
    const refused = await runLathe(["--attach", url], {
      cwd: box.project,
      env: { ...box.env, LATHE_DATA_DIR: join(box.dir, "other-data") }
    })
    assert.strictEqual(refused.code, 1, refused.stdout + refused.stderr)
    assert.match(refused.stderr, /needs a token: pass --token/)

    const wrong = await runLathe(["--attach", url, "--token", "nope"], { cwd: box.project, env: box.env })
    assert.strictEqual(wrong.code, 1, wrong.stdout + wrong.stderr)
    assert.match(wrong.stderr, /needs a token/)

    const nowhere = `http://127.0.0.1:${await freePort()}`
    const nobody = await runLathe(["--attach", nowhere], { cwd: box.project, env: box.env })
    assert.strictEqual(nobody.code, 1, nobody.stdout + nobody.stderr)
    assert.include(nobody.stderr, `Could not reach the Lathe server at ${nowhere}`)

    const bad = await runLathe(["--attach", "not a url"], { cwd: box.project, env: box.env })
    assert.strictEqual(bad.code, 1, bad.stdout + bad.stderr)
    assert.match(bad.stderr, /not a URL/)
  })
})
