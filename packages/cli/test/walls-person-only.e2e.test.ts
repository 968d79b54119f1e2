import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { assert, describe, it, onTestFinished } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// "Walls that hold": a command that fails inside the real bwrap sandbox with "Read-only file system" asks to rerun
// outside it (sandbox_escape), an ask only a person may approve. Without a terminal nothing approves it: not the
// defaults, not --yes, not a "*": "allow" rule; only a rule naming sandbox_escape in the user's own config.
// Each test has its own model server, closed when that test is over: a test that ran out of time never takes the
// next test's server down with it (nor the other way round).
const setup = async (global?: unknown) => {
  const server = await startScriptedServer([
    { steps: [{ tool: "bash", input: { command: "node payload.cjs", description: "run the payload" } }] },
    { steps: [{ text: "finished" }] }
  ])
  onTestFinished(() => server.close())
  const box = sandbox()
  // The victim lies outside every folder the sandbox leaves writable: the project, the (own) temp dir, the data dir.
  const victim = join(box.dir, "victim", "pwned")
  mkdirSync(join(box.dir, "victim"))
  mkdirSync(join(box.dir, "tmp"))
  // A script file: the analyser does not read it, so only the sandbox stands between it and the victim.
  writeFileSync(
    join(box.project, "payload.cjs"),
    `require("node:fs").writeFileSync(${JSON.stringify(victim)}, "pwned")\n`
  )
  if (global !== undefined) {
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify(global))
  }
  const env = { ...box.env, TMPDIR: join(box.dir, "tmp"), LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
  return { ...box, env, victim, server }
}

/**
 * What the model read back from the bash call: the first request that carries a tool result (the second request,
 * unless a slow machine made the loop retry the first).
 */
const toolResult = (scripted: ScriptedServer): string =>
  JSON.stringify(
    scripted.requests.map((request) => request.body).find((body) => JSON.stringify(body).includes('"role":"tool"')) ??
      ""
  )

/** What a failed assertion should show: the run's stderr and which requests the model server saw. */
const seen = (run: { readonly stderr: string }, scripted: ScriptedServer): string =>
  `stderr:\n${run.stderr}\nrequests: ${scripted.requests.length} (${scripted.requests.map((r) => JSON.stringify(r.body).length).join(", ")} bytes)`

// Each run starts bwrap and the CLI from source (some 7 s on a quiet machine): room for a loaded CI machine.
const TIMEOUT = 60_000

const refused = async (args: ReadonlyArray<string>, global?: unknown) => {
  const { project, env, victim, server: scripted } = await setup(global)
  const run = await runLathe(["run", "--format", "json", ...args, "run the payload"], {
    cwd: project,
    env,
    timeoutMs: TIMEOUT
  })
  assert.isFalse(existsSync(victim), "the payload ran outside the sandbox")
  const asked = run.events.find((event) => event.type === "permission.asked")
  assert.strictEqual(asked?.type === "permission.asked" ? asked.permission : "", "sandbox_escape", run.stderr)
  assert.strictEqual(asked?.type === "permission.asked" ? asked.metadata.requiresPerson : undefined, true)
  assert.strictEqual(run.code, 1, run.stderr)
  assert.include(run.stderr, "only a person may approve it (--yes does not), and there is no terminal")
  const result = toolResult(scripted)
  assert.include(result, "Read-only file system", seen(run, scripted))
  assert.include(result, "Only a person may approve this sandbox_escape request")
  assert.include(result, "sandbox_escape")
}

describe("lathe run without a terminal: a rerun outside the sandbox needs a person", () => {
  it(
    "with the default config it is refused, the victim file never appears, and the model is told why",
    {
      timeout: TIMEOUT
    },
    () => refused([])
  )

  it("--yes does not approve it", { timeout: TIMEOUT }, () => refused(["--yes"]))

  it('a "*": "allow" rule in the user\'s config does not approve it, even with --yes', { timeout: TIMEOUT }, () =>
    refused(["--yes"], { permission: { "*": "allow" } })
  )

  it('a "sandbox_escape": "allow" rule in the user\'s config approves it: the payload really runs outside', {
    timeout: TIMEOUT
  }, async () => {
    const { project, env, victim, server: scripted } = await setup({ permission: { sandbox_escape: "allow" } })
    const run = await runLathe(["run", "--format", "json", "run the payload"], {
      cwd: project,
      env,
      timeoutMs: TIMEOUT
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isTrue(existsSync(victim), "the approved rerun did not run outside the sandbox")
    assert.isFalse(run.events.some((event) => event.type === "permission.asked"))
    assert.include(toolResult(scripted), "this is the output of the rerun outside the sandbox", seen(run, scripted))
  })
})

describe("lathe permissions explain agrees", () => {
  it('sandbox_escape under "*": "allow" is a person\'s ask; a rule naming it allows it', {
    timeout: TIMEOUT
  }, async () => {
    const wildcard = sandbox()
    mkdirSync(join(wildcard.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(wildcard.dir, "config", "lathe", "lathe.json"), JSON.stringify({ permission: { "*": "allow" } }))
    const asked = await runLathe(["permissions", "explain", "sandbox_escape", "make install"], {
      cwd: wildcard.project,
      env: wildcard.env
    })
    assert.strictEqual(asked.code, 0, asked.stderr)
    assert.include(asked.stdout, 'sandbox_escape "make install": ask (only a person may approve)')
    assert.include(asked.stdout, 'decided by: rule sandbox_escape "*": ask (from defaults)')
    assert.include(asked.stdout, "--yes, plugins, wildcard rules")
    const named = sandbox()
    mkdirSync(join(named.dir, "config", "lathe"), { recursive: true })
    const config = { permission: { "*": "allow", sandbox_escape: { "make *": "allow" } } }
    writeFileSync(join(named.dir, "config", "lathe", "lathe.json"), JSON.stringify(config))
    const allowed = await runLathe(["permissions", "explain", "sandbox_escape", "make install", "--json"], {
      cwd: named.project,
      env: named.env
    })
    assert.strictEqual(allowed.code, 0, allowed.stderr)
    assert.include(allowed.stdout, '"decision": "allow"')
  })
})
