import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { resolvePaths } from "@lathe/core"
import { appendAudit, approvalsPath, auditPath, writeApprovals } from "@lathe/permission"
import { Effect } from "effect"
import { assert, describe, it } from "vitest"
import { main } from "../src/main.js"

/** A project folder outside git with its own home, config and data dirs, and a lathe.json. */
const project = (config: unknown) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-cli-permissions-")))
  const root = join(base, "project")
  mkdirSync(root)
  writeFileSync(join(root, "lathe.json"), JSON.stringify(config))
  const env = { HOME: base, LATHE_DATA_DIR: join(base, "data"), XDG_CONFIG_HOME: join(base, "config") }
  return { root, env }
}

const run = async (args: ReadonlyArray<string>, where: ReturnType<typeof project>) => {
  let stdout = ""
  let stderr = ""
  const code = await main(args, {
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
    env: where.env,
    cwd: where.root,
    isTTY: false
  })
  return { code, stdout, stderr }
}

const policy = { permission: { bash: { "*": "ask", "rm *": "deny" } } }

describe("lathe permissions explain", () => {
  it("names the deciding rule and the file it came from", async () => {
    const where = project(policy)
    const { code, stdout } = await run(["permissions", "explain", "bash", "CI=true git push origin main"], where)
    assert.strictEqual(code, 0)
    assert.include(stdout, 'bash "CI=true git push origin main": ask')
    assert.include(stdout, `rule bash "*": ask (from ${join(where.root, "lathe.json")})`)
  })

  it("checks each command of a line: a deny anywhere decides", async () => {
    const where = project(policy)
    const { stdout } = await run(["permissions", "explain", "bash", "ls && rm -rf build"], where)
    assert.match(stdout, /^bash "ls && rm -rf build": deny/)
    assert.include(stdout, 'bash "rm -rf build": deny')
    assert.include(stdout, 'rule bash "rm *": deny')
  })

  it("shows the built-in defaults deciding, e.g. .env files are asked", async () => {
    const where = project({})
    const env = await run(["permissions", "explain", "read", "config/.env"], where)
    assert.include(env.stdout, 'read "config/.env": ask')
    assert.include(env.stdout, 'rule read "*.env": ask (from defaults)')
    const example = await run(["permissions", "explain", "read", "config/.env.example", "--json"], where)
    assert.strictEqual(JSON.parse(example.stdout).decision, "allow")
  })

  it("reports a remembered approval as the reason", async () => {
    const where = project(policy)
    const paths = await resolvePaths(where.root, where.env)
    await Effect.runPromise(
      writeApprovals(approvalsPath(paths.data, paths.projectID), [
        { permission: "bash", pattern: "git push *", action: "allow", source: "remembered approval" }
      ])
    )
    const { stdout } = await run(["permissions", "explain", "bash", "git push origin main"], where)
    assert.include(stdout, ": allow")
    assert.include(stdout, 'remembered approval "git push *"')
  })

  it("rejects bad usage with exit code 2 and says what was expected", async () => {
    const where = project({})
    const missing = await run(["permissions", "explain", "bash"], where)
    assert.strictEqual(missing.code, 2)
    assert.include(missing.stderr, "expected a permission and one pattern")
    const unknown = await run(["permissions", "nope"], where)
    assert.strictEqual(unknown.code, 2)
    assert.include(unknown.stderr, 'unknown subcommand "nope"')
  })
})

describe("lathe permissions audit", () => {
  it("prints the recorded decisions, filtered by session", async () => {
    const where = project({})
    const paths = await resolvePaths(where.root, where.env)
    await Effect.runPromise(
      appendAudit(auditPath(paths.data), [
        { time: 0, sessionID: "ses_a", permission: "bash", pattern: "ls", decision: "allow", by: "rule" },
        {
          time: 1,
          sessionID: "ses_b",
          permission: "edit",
          pattern: "a.ts",
          decision: "reject",
          by: "reply",
          reason: "no"
        }
      ])
    )
    const all = await run(["permissions", "audit"], where)
    assert.strictEqual(all.code, 0)
    assert.strictEqual(all.stdout.trim().split("\n").length, 2)
    const one = await run(["permissions", "audit", "--session", "ses_b"], where)
    assert.include(one.stdout, 'edit "a.ts" reject by reply: no')
    assert.notInclude(one.stdout, "ses_a")
    const bad = await run(["permissions", "audit", "--limit", "zero"], where)
    assert.strictEqual(bad.code, 2)
  })
})
