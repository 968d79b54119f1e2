import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// End to end: the real CLI process and its SQLite store; sessions made by `lathe run` against a scripted server.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

interface Listed {
  readonly id: string
  readonly title: string
  readonly directory: string
  readonly created: number
  readonly updated: number
}

describe("lathe session list (end to end)", () => {
  it("lists the sessions --session can take, newest first, in text and JSON; says so when there are none", async () => {
    const box = sandbox()
    const empty = await runLathe(["session", "list"], { cwd: box.project, env: box.env })
    assert.strictEqual(empty.code, 0, empty.stderr)
    assert.strictEqual(empty.stdout, "")
    assert.include(empty.stderr, "has no session yet")
    const emptyJson = await runLathe(["session", "list", "--json"], { cwd: box.project, env: box.env })
    assert.deepStrictEqual(JSON.parse(emptyJson.stdout), [])

    server = await startScriptedServer([{ steps: [{ text: "First." }] }, { steps: [{ text: "Second." }] }])
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
    for (const task of ["the first task", "the second task"]) {
      const run = await runLathe(["run", task], { cwd: box.project, env })
      assert.strictEqual(run.code, 0, run.stderr)
    }

    const json = await runLathe(["session", "list", "--json"], { cwd: box.project, env: box.env })
    assert.strictEqual(json.code, 0, json.stderr)
    const listed = JSON.parse(json.stdout) as ReadonlyArray<Listed>
    assert.strictEqual(listed.length, 2)
    const [newest, oldest] = listed
    assert.isAtLeast(newest?.updated ?? 0, oldest?.updated ?? Number.POSITIVE_INFINITY)
    for (const session of listed) {
      assert.match(session.id, /^ses_/)
      assert.strictEqual(typeof session.title, "string")
      assert.isAtMost(session.created, session.updated)
    }

    const text = await runLathe(["session", "list"], { cwd: box.project, env: box.env })
    assert.strictEqual(text.code, 0, text.stderr)
    const lines = text.stdout.trimEnd().split("\n")
    assert.strictEqual(lines.length, 2)
    assert.match(lines[0] ?? "", new RegExp(`^${newest?.id}  \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}  \\S`))
    assert.match(lines[1] ?? "", new RegExp(`^${oldest?.id}  `))

    // What it lists is what --session takes.
    await server.close()
    server = await startScriptedServer([{ steps: [{ text: "Third." }] }])
    const resumed = await runLathe(["run", "--format", "json", "--session", oldest?.id ?? "", "go on"], {
      cwd: box.project,
      env: { ...env, LATHE_BASE_URL: server.url }
    })
    assert.strictEqual(resumed.code, 0, resumed.stderr)
    assert.include(JSON.stringify(server.requests[0]?.body), "the first task")

    const limited = await runLathe(["session", "list", "--limit", "1"], { cwd: box.project, env: box.env })
    assert.strictEqual(limited.stdout.trimEnd().split("\n").length, 1)
    assert.match(limited.stdout, new RegExp(`^${oldest?.id}  `), "the session just continued is now the newest")
    assert.include(limited.stderr, "the 1 most recent; --limit <n> or --all for more")
  })

  it("a run that fails before its prompt is stored leaves no empty session; one that fails later keeps its prompt", async () => {
    const box = sandbox()
    const list = async () =>
      JSON.parse(
        (await runLathe(["session", "list", "--json"], { cwd: box.project, env: box.env })).stdout
      ) as ReadonlyArray<Listed>
    const noModel = await runLathe(["run", "hi"], { cwd: box.project, env: box.env })
    assert.strictEqual(noModel.code, 1)
    assert.include(noModel.stderr, "No model provider is configured")
    server = await startScriptedServer([{ type: "error", status: 401 }])
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
    const noAgent = await runLathe(["run", "--format", "json", "--agent", "nosuch", "hi"], { cwd: box.project, env })
    assert.strictEqual(noAgent.code, 1)
    assert.include(noAgent.stderr, 'No agent "nosuch"')
    // Followers of the JSON events see the session go as well as come.
    const created = noAgent.events.find((e) => e.type === "session.created")
    const deleted = noAgent.events.find((e) => e.type === "session.deleted")
    assert.isDefined(created)
    assert.strictEqual(
      deleted?.type === "session.deleted" ? deleted.sessionID : "",
      created?.type === "session.created" ? created.session.id : "-"
    )
    assert.deepStrictEqual(await list(), [])

    const rejected = await runLathe(["run", "keep this prompt"], { cwd: box.project, env })
    assert.strictEqual(rejected.code, 1)
    const kept = await list()
    assert.strictEqual(kept.length, 1)
    assert.strictEqual(kept[0]?.title, "keep this prompt")
  })

  it("bad usage exits 2 with what to do", async () => {
    const box = sandbox()
    const unknown = await runLathe(["session", "lsit"], { cwd: box.project, env: box.env })
    assert.strictEqual(unknown.code, 2)
    assert.include(unknown.stderr, 'unknown subcommand "lsit"')
    const limit = await runLathe(["session", "list", "--limit", "0"], { cwd: box.project, env: box.env })
    assert.strictEqual(limit.code, 2)
    assert.include(limit.stderr, '--limit must be a whole number of at least 1, not "0"')
    const bare = await runLathe(["session"], { cwd: box.project, env: box.env })
    assert.strictEqual(bare.code, 2)
    assert.include(bare.stderr, "Usage: lathe session list")
  })
})
