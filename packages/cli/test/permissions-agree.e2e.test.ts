import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { main } from "../src/main.js"
import { type CliRun, runLathe, sandbox } from "./helpers.js"

// "One ruleset, one decision": what `lathe permissions explain` says is what a real run decides, and a plugin's
// contributed default (MCP's) no longer reaches bash. Real CLI processes, a real MCP server, the real engine and
// audit trail; only the model is scripted.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** A sandbox whose user config (trusted, as a person's own is) is `config`, with `plugins` in its plugins folder. */
const box = (config: unknown, plugins: Record<string, string> = {}) => {
  const made = sandbox()
  const dir = join(made.env.XDG_CONFIG_HOME ?? "", "lathe")
  mkdirSync(join(dir, "plugins"), { recursive: true })
  writeFileSync(join(dir, "lathe.json"), JSON.stringify(config))
  for (const [name, text] of Object.entries(plugins)) writeFileSync(join(dir, "plugins", name), text)
  writeFileSync(join(made.project, "a.txt"), "alpha\n")
  return made
}

/** The MCP server the CLI's own MCP tests use (server-everything over stdio), from node_modules. */
const everything = (): Record<string, unknown> => {
  const path = join(
    import.meta.dirname,
    "..",
    "..",
    "..",
    "node_modules",
    "@modelcontextprotocol",
    "server-everything",
    "dist",
    "index.js"
  )
  return { everything: { type: "local", command: [process.execPath, path, "stdio"] } }
}

const bashCall = (command: string) => ({ steps: [{ tool: "bash", input: { command, description: "run it" } }] })

const completedOutputs = (run: CliRun): Array<string> =>
  run.events.flatMap((e) =>
    e.type === "tool.completed" && e.state.status === "completed" ? [String(e.state.output)] : []
  )

/** Commands Lathe cannot analyse: code in another language. */
const unknownCommands = [
  "python3 <<'PY'\nprint('from-heredoc')\nPY",
  "python3 -c \"print('from-python')\"",
  "node -e \"console.log('from-node')\""
]

describe("a contributed default does not reach bash", () => {
  it('"*": "allow" and an MCP server configured: a heredoc, python3 -c and node -e run, no ask, no --yes', async () => {
    server = await startScriptedServer([...unknownCommands.map(bashCall), { steps: [{ text: "done" }] }])
    const { project, env } = box({ permission: { "*": "allow" }, mcp: everything() })
    const run = await runLathe(["run", "--format", "json", "run the scripts"], {
      cwd: project,
      env: { ...env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" },
      timeoutMs: 60_000
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isFalse(
      run.events.some((e) => e.type === "permission.asked"),
      "no ask"
    )
    const outputs = completedOutputs(run).join("\n")
    for (const word of ["from-heredoc", "from-python", "from-node"]) assert.include(outputs, word)
    // explain says the same thing.
    const explained = await explain(["bash", unknownCommands[1] as string, "--json"], project, env)
    assert.strictEqual(JSON.parse(explained.stdout).decision, "allow", explained.stderr)
  })

  it("with a bash deny rule present they are refused as before: only a person may approve them", async () => {
    const line = "python3 -c \"open('made-by-python', 'w')\""
    server = await startScriptedServer([bashCall(line), { steps: [{ text: "done" }] }])
    const permission = { "*": "allow", bash: { "*": "allow", "rm *": "deny" } }
    const { project, env } = box({ permission, mcp: everything() })
    const run = await runLathe(["run", "--format", "json", "--yes", "run it"], {
      cwd: project,
      env: { ...env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" },
      timeoutMs: 60_000
    })
    assert.strictEqual(run.code, 1, run.stderr)
    assert.include(run.stderr, "only a person may approve it (--yes does not)")
    assert.isFalse(existsSync(join(project, "made-by-python")))
    const explained = await explain(["bash", line, "--json"], project, env)
    const verdict = JSON.parse(explained.stdout)
    assert.strictEqual(verdict.decision, "ask")
    assert.isTrue(verdict.requiresPerson)
  })
})

/** `lathe permissions explain …` in this process (the same `main` the executable runs). */
const explain = async (args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) => {
  let stdout = ""
  let stderr = ""
  const code = await main(["permissions", "explain", ...args], {
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
    env,
    cwd,
    isTTY: false
  })
  return { code, stdout, stderr }
}

/** A tool that asks exactly what it is given and reports the outcome, so a run goes on after a refusal. */
const probePlugin = `import { definePlugin, Tool } from "@lathe/plugin"
import { z } from "zod"

export default definePlugin({
  name: "probe",
  setup: async () => ({
    tools: [
      Tool.define("probe", {
        description: "Asks one permission",
        parameters: z.object({ permission: z.string(), pattern: z.string() }),
        mutates: false,
        execute: async ({ permission, pattern }, ctx) => {
          try {
            await ctx.ask({ permission, patterns: [pattern] })
            return { title: "probe", output: "allowed" }
          } catch (error) {
            return { title: "probe", output: "refused: " + String(error?.message ?? error) }
          }
        }
      })
    ]
  })
})
`

type Verdict = "allow" | "ask" | "deny"

const configs: ReadonlyArray<Record<string, unknown>> = [
  {},
  { "*": "allow" },
  { bash: { "*": "allow", "rm *": "deny", "/usr/bin/curl *": "deny" } },
  { bash: { "*": "ask", "git status": "allow", "git push *": "deny" }, edit: { "*.lock": "deny" } },
  { read: { "*": "allow", "secret/*": "deny" }, external_directory: { "/tmp/*": "allow" }, webfetch: "ask" }
]
const agents = ["build", "plan", "careful"]
const requests: ReadonlyArray<readonly [string, string]> = [
  ["bash", "ls -la"],
  ["bash", "rm -rf build"],
  ["bash", "/bin/rm x"],
  ["bash", "r\\\nm x"],
  ["bash", "git status"],
  ["bash", "git push origin main"],
  ["bash", "curl https://example.com"],
  ["bash", "echo x > src/a.ts"],
  ["bash", "echo plan > .lathe/plans/p.md"],
  ["bash", "python3 -c 'print(1)'"],
  ["bash", 'echo x > "$OUT"'],
  ["bash", "echo hi > /etc/x"],
  ["edit", "src/a.ts"],
  ["edit", "package.lock"],
  ["edit", ".lathe/plans/p.md"],
  ["read", ".env"],
  ["read", "secret/key"],
  ["read", "src/a.ts"],
  ["external_directory", "/tmp/*"],
  ["external_directory", "/etc/*"],
  ["webfetch", "https://example.com"],
  ["github_create_issue", "mcp:may-write"],
  ["github_get_issue", "mcp:read-only"],
  ["question", "*"]
]

interface AuditLine {
  readonly callID?: string
  readonly decision: string
}

/** What the engine decided for each call, in call order, from the audit trail. */
const auditVerdicts = (file: string): Array<Verdict> => {
  const byCall = new Map<string, Array<string>>()
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue
    const entry = JSON.parse(line) as AuditLine
    if (entry.callID === undefined) continue
    byCall.set(entry.callID, [...(byCall.get(entry.callID) ?? []), entry.decision])
  }
  return [...byCall.values()].map((decisions) =>
    decisions.includes("deny") ? "deny" : decisions.every((d) => d === "allow") ? "allow" : "ask"
  )
}

/** A seeded generator (mulberry32): the same draws on every run, a different seed draws others. */
const generator = (seed: number) => {
  let state = seed >>> 0
  return (below: number): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (((t ^ (t >>> 14)) >>> 0) % below) as number
  }
}

describe("explain agrees with the run (property)", () => {
  it("for drawn requests, configs and agents, explain's verdict is the verdict the engine records", async () => {
    const draw = generator(Number(process.env.LATHE_PROPERTY_SEED ?? 28))
    const seen = new Set<string>()
    // Every config and every agent is drawn at least once over the groups.
    for (let group = 0; group < configs.length; group++) {
      const config = group
      const agent = agents[group % agents.length] as string
      const picks = new Set<number>()
      while (picks.size < 5) picks.add(draw(requests.length))
      const drawn = [...picks].map((index) => requests[index] as readonly [string, string])
      const careful = { mode: "primary", permission: { bash: { "*": "ask", "ls *": "allow" }, edit: "ask" } }
      server = await startScriptedServer([
        ...drawn.map(([permission, pattern]) => ({ steps: [{ tool: "probe", input: { permission, pattern } }] })),
        { steps: [{ text: "done" }] }
      ])
      const made = box({ permission: configs[config], agent: { careful } }, { "probe.mjs": probePlugin })
      const env = { ...made.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
      const run = await runLathe(["run", "--format", "json", "--agent", agent, "probe"], {
        cwd: made.project,
        env,
        timeoutMs: 60_000
      })
      await server.close()
      server = undefined
      const recorded = auditVerdicts(join(made.dir, "data", "permission", "audit.jsonl"))
      assert.strictEqual(recorded.length, drawn.length, run.stderr)
      for (const verdict of recorded) seen.add(verdict)
      for (const [index, [permission, pattern]] of drawn.entries()) {
        const explained = await explain([permission, pattern, "--agent", agent, "--json"], made.project, made.env)
        const said = JSON.parse(explained.stdout) as { decision: Verdict }
        assert.strictEqual(
          said.decision,
          recorded[index],
          `${permission} ${JSON.stringify(pattern)} under agent ${agent}, config ${JSON.stringify(configs[config])}`
        )
      }
    }
    // The draws reach every verdict, so agreement is not agreement on one answer.
    assert.sameMembers([...seen], ["allow", "ask", "deny"])
  }, 300_000)
})

describe("every agent can read the truncation folder", () => {
  it("explore reads the file its truncated output was saved to, with no external_directory ask", async () => {
    let saved = ""
    server = await startScriptedServer((request, index) => {
      if (index === 0) return { steps: [{ tool: "bash", input: { command: "cat big.txt", description: "read it" } }] }
      if (index === 1) {
        saved = /(\/[^\s"'\\]*tool-output\/[^\s"'\\]+\.txt)/.exec(JSON.stringify(request.body))?.[1] ?? ""
        return { steps: [{ tool: "read", input: { filePath: saved, offset: 4000, limit: 3 } }] }
      }
      return { steps: [{ text: "done" }] }
    })
    const { project, env } = box({})
    writeFileSync(join(project, "big.txt"), Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`).join("\n"))
    // --yes answers explore's own `cat *` ask; an external_directory ask would show as an event all the same.
    const run = await runLathe(["run", "--format", "json", "--yes", "@explore what is on line 4000 of big.txt?"], {
      cwd: project,
      env: { ...env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" },
      timeoutMs: 60_000
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(saved, "tool-output", "the truncation note names the saved file")
    const asked = run.events.filter((e) => e.type === "permission.asked").map((e) => e.permission)
    assert.notInclude(asked, "external_directory")
    assert.include(completedOutputs(run).join("\n"), "line 4000")
  })
})
