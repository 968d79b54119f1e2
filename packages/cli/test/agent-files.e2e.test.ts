/**
 * Agent files written for other tools, through the real CLI, real git, the real permission engine and a scripted
 * OpenAI-compatible server: a Claude Code–shaped `.claude/agents/reviewer.md` (`model: sonnet`, `tools: Read, Grep,
 * Glob, Bash(git diff:*)`, `color: blue`) and an OpenCode-shaped `.opencode/agent/docs.md` (`mode`, `tools` map,
 * `permission`) load and behave as declared. Before, the Claude file failed the schema and the agent silently did
 * not exist.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { ModelCatalog, newestCatalogModel } from "@lathe/core"
import { type RecordedRequest, type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { Effect } from "effect"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

/** The catalogue's newest `claude-sonnet…` of the anthropic provider, as the CLI resolves `model: sonnet`. */
const newestSonnet = async (): Promise<string | undefined> => {
  const catalog = ModelCatalog.make({
    dataDir: sandbox().env.LATHE_DATA_DIR ?? "",
    url: "http://127.0.0.1:9/api.json",
    refresh: false
  })
  await Effect.runPromise(catalog.list("anthropic"))
  return newestCatalogModel("anthropic", "claude-sonnet")
}

// Several real CLI runs per test, on a machine shared with other test runs.
const timeoutMs = 90_000
const slow = { timeout: 4 * timeoutMs }

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** The model id a request asked for. */
const modelOf = (request: RecordedRequest | undefined) => (request?.body as { model?: string } | undefined)?.model

/** The tools a request offered, by name. */
const offered = (request: RecordedRequest | undefined) =>
  ((request?.body as { tools?: Array<{ function: { name: string } }> } | undefined)?.tools ?? []).map(
    (tool) => tool.function.name
  )

const REVIEWER = `---
name: reviewer
description: Expert code reviewer. Use proactively after writing or modifying code.
tools: Read, Grep, Glob, Bash(git diff:*)
model: sonnet
color: blue
---
You are a senior code reviewer. Run git diff to see recent changes, then review them.
`

const DOCS = `---
description: Writes and maintains project documentation
mode: subagent
model: local/beta
temperature: 0.1
tools:
  bash: false
permission:
  edit:
    "*": deny
    "docs/*": allow
---
You are a technical writer. Only touch the docs folder.
`

/** A trusted git project with one agent file, the user's provider `local` in the global config (and `extra`). */
const setup = async (script: ReadonlyArray<ScriptedReply>, file: string, text: string, extra = {}) => {
  server = await startScriptedServer(script)
  const box = sandbox()
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({
      model: "local/alpha",
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { alpha: {}, beta: {} } } },
      ...extra
    })
  )
  const git = (...args: Array<string>) => execFileSync("git", args, { cwd: box.project, env: box.env })
  git("init", "-q")
  writeFileSync(join(box.project, "app.ts"), "export const x = 1\n")
  git("add", ".")
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
  writeFileSync(join(box.project, "app.ts"), "export const x = 2\n")
  mkdirSync(join(box.project, file, ".."), { recursive: true })
  writeFileSync(join(box.project, file), text)
  const trust = await runLathe(["trust"], { cwd: box.project, env: box.env, timeoutMs })
  assert.strictEqual(trust.code, 0, trust.stderr)
  return { ...box, server }
}

describe("agent files in Claude Code's and OpenCode's shapes", () => {
  it(
    "a Claude Code reviewer loads: its tools are the allow-list, bash only for git diff, one notice",
    slow,
    async () => {
      const { project, env, server } = await setup(
        [
          { steps: [{ tool: "bash", input: { command: "git diff", description: "see the changes" } }] },
          { steps: [{ tool: "bash", input: { command: "touch reviewer-was-here", description: "make a file" } }] },
          { steps: [{ text: "x changed from 1 to 2; looks fine." }] }
        ],
        ".claude/agents/reviewer.md",
        REVIEWER
      )
      // The same command does its damage when nothing narrows bash: plain bash in the project.
      execFileSync("bash", ["-c", "touch probe-without-lathe"], { cwd: project })
      assert.isTrue(existsSync(join(project, "probe-without-lathe")))

      const run = await runLathe(["run", "--format", "json", "--yes", "@reviewer review my change"], {
        cwd: project,
        env,
        timeoutMs
      })
      assert.strictEqual(run.code, 0, run.stderr)
      // Only the listed tools are offered (Read, Grep, Glob, Bash), and the request went to the user's model: no
      // Anthropic provider is configured, so `model: sonnet` inherits.
      assert.sameMembers(offered(server.requests[0]), ["read", "grep", "glob", "bash"])
      assert.strictEqual(modelOf(server.requests[0]), "alpha")
      const diff = run.events.find((e) => e.type === "tool.completed" && e.tool === "bash")
      assert.include(
        diff?.type === "tool.completed" && diff.state.status === "completed" ? diff.state.output : "",
        "+export const x = 2"
      )
      const refused = run.events.find((e) => e.type === "tool.error" && e.tool === "bash")
      assert.match(
        refused?.type === "tool.error" && refused.state.status === "error" ? refused.state.error : "",
        /denied/i
      )
      assert.isFalse(existsSync(join(project, "reviewer-was-here")))
      // One notice for the file, naming what was ignored and that the model inherits.
      const notices = run.stderr.split("\n").filter((line) => line.includes("reviewer.md"))
      assert.lengthOf(notices, 1, run.stderr)
      assert.include(notices[0], "ignored color (Lathe does not use it)")
      assert.include(notices[0], 'model: "sonnet" is a Claude model and no Anthropic provider is configured')
    }
  )

  it("with an Anthropic provider configured, `model: sonnet` is that provider's Sonnet", slow, async () => {
    const { project, env } = await setup([], ".claude/agents/reviewer.md", REVIEWER, {
      provider: {
        local: { type: "openai-compatible", baseURL: "http://127.0.0.1:9/v1", models: { alpha: {} } },
        anthropic: { type: "anthropic", apiKey: "not-used" }
      }
    })
    const list = await runLathe(["agents"], { cwd: project, env, timeoutMs })
    assert.strictEqual(list.code, 0, list.stderr)
    // The newest Sonnet of the catalogue's anthropic provider (by release date); a Claude file is a subagent.
    const expected = await newestSonnet()
    assert.match(
      list.stdout,
      new RegExp(`^reviewer +subagent +anthropic/${expected} +/.*\\.claude/agents/reviewer\\.md$`, "m")
    )
  })

  it("an OpenCode subagent loads: its model, no bash, and edits only under docs/", slow, async () => {
    const { project, env, server } = await setup(
      [
        {
          steps: [
            { tool: "write", input: { filePath: "docs/guide.md", content: "# Guide\n" } },
            { tool: "write", input: { filePath: "notes.ts", content: "export const y = 3\n" } }
          ]
        },
        { steps: [{ text: "Wrote docs/guide.md." }] }
      ],
      ".opencode/agent/docs.md",
      DOCS
    )
    const run = await runLathe(["run", "--format", "json", "--yes", "@docs write a guide"], {
      cwd: project,
      env,
      timeoutMs
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(modelOf(server.requests[0]), "beta")
    assert.notInclude(offered(server.requests[0]), "bash")
    assert.include(offered(server.requests[0]), "write")
    assert.isTrue(existsSync(join(project, "docs", "guide.md")))
    const refused = run.events.find((e) => e.type === "tool.error" && e.tool === "write")
    assert.match(
      refused?.type === "tool.error" && refused.state.status === "error" ? refused.state.error : "",
      /denied/i
    )
    assert.isFalse(existsSync(join(project, "notes.ts")))
    assert.notInclude(run.stderr, "docs.md", "an OpenCode file has nothing to warn about")
  })
})
