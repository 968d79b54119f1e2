/**
 * "Bring your setup" end to end: a repository's `.claude/settings.json` read as a config source through the real CLI.
 * Its deny rule holds while the project is untrusted; its allow rule and `env` wait for `lathe trust`; a Claude
 * `Bash(npm run test:*)` never allows a compound command that hides another program. OpenCode's custom commands load
 * where `.claude/commands` do (in process).
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { configCommand } from "../src/commands/config.js"
import { loadCustomCommands } from "../src/custom-commands.js"
import { runLathe, sandbox } from "./helpers.js"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" } })

/** A project that is a git clone of a bare remote, with one commit the remote does not have yet. */
const repository = (project: string, remote: string) => {
  git(tmpdir(), "init", "-q", "--bare", "-b", "main", remote)
  git(project, "init", "-q", "-b", "main")
  git(project, "remote", "add", "origin", remote)
  writeFileSync(join(project, "a.txt"), "alpha\n")
  git(project, "add", "a.txt")
  git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "local work")
}

const bash = (command: string) => ({ steps: [{ tool: "bash", input: { command, description: "run it" } }] })

describe("Claude Code settings through the CLI", () => {
  it("an untrusted repo's deny rule holds: git push is denied even with --yes, and the model sees why", async () => {
    // Without Lathe the payload does damage: plain git pushes the commit to the remote.
    const proof = mkdtempSync(join(tmpdir(), "lathe-push-proof-"))
    repository(proof, join(proof, "..", `${proof.split("/").pop()}-remote.git`))
    git(proof, "push", "-q", "origin", "main")
    assert.include(git(proof, "ls-remote", "origin"), "refs/heads/main")

    server = await startScriptedServer([bash("git push origin main"), { steps: [{ text: "cannot push" }] }])
    const box = sandbox()
    const remote = join(box.dir, "remote.git")
    repository(box.project, remote)
    mkdirSync(join(box.project, ".claude"))
    writeFileSync(
      join(box.project, ".claude", "settings.json"),
      JSON.stringify({ permissions: { deny: ["Bash(git push:*)"], allow: ["Bash"] } }, null, 2)
    )
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const run = await runLathe(["run", "--format", "json", "--yes", "push it"], { cwd: box.project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(git(box.project, "ls-remote", "origin"), "")
    assert.isFalse(run.events.some((e) => e.type === "permission.asked"))
    const failed = run.events.find((e) => e.type === "tool.error")
    const error = failed?.type === "tool.error" && failed.state.status === "error" ? failed.state.error : ""
    assert.match(error, /denied/i)
    assert.include(JSON.stringify(server.requests[1]?.body), "denied")
    assert.include(run.stderr, "permissions allow Bash")
  }, 20_000)

  /** A project whose `.claude/settings.json` allows `npm run test:*` and `printenv:*` and sets one variable. */
  const claudeProject = () => {
    const box = sandbox()
    writeFileSync(
      join(box.project, "package.json"),
      JSON.stringify({ name: "p", private: true, scripts: { test: "touch ran-tests" } })
    )
    mkdirSync(join(box.project, ".claude"))
    writeFileSync(
      join(box.project, ".claude", "settings.json"),
      JSON.stringify({
        permissions: { allow: ["Bash(npm run test:*)", "Bash(printenv:*)"] },
        env: { SETUP_MARKER: "from-claude-settings" }
      })
    )
    // The person's own config asks before every command (Lathe's default allows them, inside the sandbox).
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify({ permission: { bash: "ask" } }))
    return box
  }

  it("an untrusted repo's allow rule is ignored: `npm run test` is asked, and refused without a terminal", async () => {
    const box = claudeProject()
    server = await startScriptedServer([bash("npm run test"), { steps: [{ text: "stopped" }] }])
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const run = await runLathe(["run", "--format", "json", "test it"], { cwd: box.project, env })
    assert.strictEqual(run.code, 1)
    assert.isTrue(run.events.some((e) => e.type === "permission.asked"))
    assert.isFalse(existsSync(join(box.project, "ran-tests")))
    assert.include(run.stderr, "permissions allow Bash(npm run test:*)")
  }, 20_000)

  it("trusted, its allow rule and env apply, and `npm run test:*` never allows `npm run test && touch pwned`", async () => {
    const compound = "npm run test && touch pwned"
    // Without Lathe the compound line runs both programs.
    const proof = mkdtempSync(join(tmpdir(), "lathe-compound-proof-"))
    writeFileSync(join(proof, "package.json"), JSON.stringify({ scripts: { test: "true" } }))
    execFileSync("bash", ["-c", compound], { cwd: proof, stdio: "ignore" })
    assert.isTrue(existsSync(join(proof, "pwned")))

    const box = claudeProject()
    mkdirSync(join(box.dir, "data"), { recursive: true })
    writeFileSync(join(box.dir, "data", "trust.json"), JSON.stringify({ trusted: [realpathSync(box.project)] }))
    server = await startScriptedServer([
      bash("npm run test"),
      bash("printenv SETUP_MARKER"),
      bash(compound),
      { steps: [{ text: "stopped" }] }
    ])
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const run = await runLathe(["run", "--format", "json", "test it"], { cwd: box.project, env })
    assert.isTrue(existsSync(join(box.project, "ran-tests")), run.stderr)
    assert.include(JSON.stringify(server.requests[2]?.body), "from-claude-settings")
    assert.isFalse(existsSync(join(box.project, "pwned")))
    const asked = run.events.filter((e) => e.type === "permission.asked")
    assert.strictEqual(asked.length, 1)
    assert.include(JSON.stringify(asked[0]), "touch pwned")
    assert.strictEqual(run.code, 1)
  }, 20_000)
})

describe("lathe config (in process)", () => {
  it("lists Claude Code and OpenCode files as sources and each translated rule with its file and line", async () => {
    const box = sandbox()
    mkdirSync(join(box.project, ".claude"))
    const settings = join(box.project, ".claude", "settings.json")
    writeFileSync(settings, JSON.stringify({ permissions: { deny: ["Bash(git push:*)", "KillShell"] } }, null, 2))
    writeFileSync(join(box.project, "opencode.json"), JSON.stringify({ permission: { edit: "ask" }, theme: "x" }))
    let out = ""
    const io = {
      stdout: (t: string) => {
        out += t
      },
      stderr: () => {},
      env: box.env,
      cwd: box.project,
      isTTY: false
    }
    assert.strictEqual(await configCommand([], io), 0)
    assert.include(out, `${settings} (Claude Code settings) (untrusted)`)
    assert.include(out, `deny  bash "git push *" (narrows only)  from ${settings}:4 (Bash(git push:*))`)
    assert.include(out, `ask   edit "*" (narrows only)  from ${join(box.project, "opencode.json")}`)
    assert.include(out, `${settings}:5 KillShell (Lathe has no tool like KillShell)`)
    assert.include(out, "opencode.json: theme")
  })
})

describe("OpenCode commands", () => {
  it("`.opencode/command/*.md` and opencode.json `command` entries load as custom commands", async () => {
    const root = mkdtempSync(join(tmpdir(), "lathe-opencode-commands-"))
    const configDir = join(root, "config", "lathe")
    mkdirSync(join(root, ".opencode", "command"), { recursive: true })
    writeFileSync(
      join(root, ".opencode", "command", "review.md"),
      "---\ndescription: Review it\n---\nReview $ARGUMENTS"
    )
    writeFileSync(
      join(root, "opencode.jsonc"),
      '{ // comments are fine\n "command": { "ship": { "template": "Ship $1", "agent": "build" } } }'
    )
    const { commands, problems } = await loadCustomCommands(root, configDir, { trusted: true })
    assert.deepEqual(problems, [])
    const byName = Object.fromEntries(commands.map((c) => [c.name, c]))
    assert.strictEqual(byName.review?.template, "Review $ARGUMENTS")
    assert.strictEqual(byName.review?.description, "Review it")
    assert.strictEqual(byName.ship?.template, "Ship $1")
    assert.strictEqual(byName.ship?.agent, "build")
    assert.strictEqual(byName.ship?.source, join(root, "opencode.jsonc"))
  })
})
