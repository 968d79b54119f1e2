/**
 * The action's shell steps, run the way GitHub Actions runs a composite action's `run:` (bash --noprofile --norc
 * -eo pipefail on the script, each `${{ inputs.* }}` of the step's `env:` rendered to its value) with a fake `lathe`,
 * `npm` and `npx` on PATH that record their argv. The argv the action builds is then given to the real CLI, which must
 * take it. Inputs are hostile where they can be: they must reach the CLI as argv words, never as shell text.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { runLathe, sandbox } from "./helpers.js"

interface Step {
  readonly name?: string
  readonly uses?: string
  readonly run?: string
  readonly shell?: string
  readonly env?: Record<string, string>
}
interface Action {
  readonly inputs: Record<string, { readonly default?: string }>
  readonly runs: { readonly using: string; readonly steps: ReadonlyArray<Step> }
}

const action = parse(readFileSync(join(import.meta.dirname, "..", "..", "..", "action.yml"), "utf8")) as Action
const step = (name: string): Step => {
  const found = action.runs.steps.find((s) => s.name === name)
  if (found?.run === undefined) throw new Error(`action.yml has no run step "${name}"`)
  return found
}

/** Runs one `run:` step with `inputs` over the action's defaults; returns the argv each fake program was called with. */
const runStep = (name: string, inputs: Record<string, string>) => {
  const box = sandbox()
  const bin = join(box.dir, "bin")
  mkdirSync(bin)
  const log = join(box.dir, "calls.jsonl")
  for (const program of ["lathe", "npm", "npx"])
    writeFileSync(
      join(bin, program),
      `#!${process.execPath}\nconst args = process.argv.slice(2)\nrequire("node:fs").appendFileSync(${JSON.stringify(log)}, JSON.stringify([${JSON.stringify(program)}, ...args]) + "\\n")\nif (args[0] === "pack") console.log("lathe-cli-0.0.0.tgz")\nif (args[0] === "--version") console.log("lathe 0.0.0")\n`,
      { mode: 0o755 }
    )
  const values: Record<string, string> = {}
  for (const [key, input] of Object.entries(action.inputs)) values[key] = inputs[key] ?? input.default ?? ""
  // What Actions renders before the step runs: the expressions of env values. The script text has none.
  const render = (text: string) =>
    text.replace(/\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g, (_, key: string) => values[key] ?? "")
  const env: Record<string, string> = {
    ...box.env,
    PATH: `${bin}:${box.env.PATH}`,
    GITHUB_ACTION_PATH: box.project,
    RUNNER_TEMP: box.dir
  }
  for (const [key, value] of Object.entries(step(name).env ?? {})) env[key] = render(String(value))
  const script = join(box.dir, "step.sh")
  writeFileSync(script, step(name).run ?? "")
  const result = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], {
    cwd: box.project,
    env,
    encoding: "utf8"
  })
  const calls = existsSync(log)
    ? readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Array<string>)
    : []
  return { ...box, status: result.status, stderr: result.stderr, calls }
}

describe("action.yml", () => {
  it("is a composite action whose scripts take no expression into their text", () => {
    expect(action.runs.using).toBe("composite")
    for (const s of action.runs.steps)
      if (s.run !== undefined) {
        expect(s.shell).toBe("bash")
        expect(s.run).not.toContain("${{")
      }
  })

  it("hands the inputs to lathe github run as argv, the permission rules one --allow each", async () => {
    const hostile = '$(touch pwned)"; touch pwned2 #'
    const run = runStep("Answer the event", {
      model: "anthropic/claude-sonnet-4-5",
      "max-cost": "0.5",
      trigger: "@lathe",
      "allowed-permissions": "bash:npm test\n  edit:src/**  \n\nread:*.env\n",
      "allow-bots": "true",
      "github-token": hostile
    })
    expect(run.status, run.stderr).toBe(0)
    const args = [
      "github",
      "run",
      "--trigger",
      "@lathe",
      "--max-cost",
      "0.5",
      "--author-permissions",
      "write,maintain,admin",
      "--model",
      "anthropic/claude-sonnet-4-5",
      "--allow",
      "bash:npm test",
      "--allow",
      "edit:src/**",
      "--allow",
      "read:*.env",
      "--allow-bots"
    ]
    expect(run.calls).toEqual([["lathe", ...args]])
    expect(existsSync(join(run.project, "pwned")) || existsSync(join(run.project, "pwned2"))).toBe(false)

    // The real CLI takes that argv: its rules are checked, then an event without the trigger is nothing to do.
    const event = join(run.dir, "event.json")
    writeFileSync(
      event,
      JSON.stringify({
        action: "created",
        issue: { number: 1, title: "t", body: "b", user: { login: "someone", type: "User" } },
        comment: { id: 2, body: "no mention here", user: { login: "someone", type: "User" } }
      })
    )
    const env = {
      ...run.env,
      GITHUB_EVENT_NAME: "issue_comment",
      GITHUB_EVENT_PATH: event,
      GITHUB_REPOSITORY: "octo/widgets",
      GITHUB_TOKEN: "t",
      GITHUB_API_URL: "http://127.0.0.1:9"
    }
    const cli = await runLathe(args, { cwd: run.project, env })
    expect(cli.code, cli.stderr).toBe(0)
    expect(cli.stderr).toContain("nothing to do")
    // A rule the CLI cannot take fails the job at once, before GitHub or a model is asked anything.
    const bad = await runLathe(["github", "run", "--allow", "write,maintain,admin"], { cwd: run.project, env })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("is not a permission rule")
  }, 60_000)

  it("leaves --model, --allow and --allow-bots out when their inputs are empty or off", () => {
    const run = runStep("Answer the event", {})
    expect(run.status, run.stderr).toBe(0)
    expect(run.calls).toEqual([
      [
        "lathe",
        "github",
        "run",
        "--trigger",
        "/lathe",
        "--max-cost",
        "2",
        "--author-permissions",
        "write,maintain,admin"
      ]
    ])
  })

  it("installs the package given, or packs the CLI from the action's source", () => {
    const given = runStep("Install the Lathe CLI", { package: "@lathe/cli@1.2.3" })
    expect(given.status, given.stderr).toBe(0)
    expect(given.calls).toEqual([
      ["npm", "install", "--global", "@lathe/cli@1.2.3"],
      ["lathe", "--version"]
    ])
    const packed = runStep("Install the Lathe CLI", {})
    expect(packed.status, packed.stderr).toBe(0)
    expect(packed.calls).toEqual([
      ["npm", "ci", "--no-audit", "--no-fund"],
      ["npx", "nx", "run", "@lathe/cli:bundle", "--output-style=static"],
      ["npm", "pack", "--workspace", "@lathe/cli", "--pack-destination", packed.dir],
      ["npm", "install", "--global", join(packed.dir, "lathe-cli-0.0.0.tgz")],
      ["lathe", "--version"]
    ])
  })
})
