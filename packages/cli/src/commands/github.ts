import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { scrubEnv, spawnProgram } from "@lathe/core"
import { defineCommand, parseCommand, pickSubcommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"
import { plainText } from "../terminal-text.js"
import { type GithubApi, GithubApiError, githubApi } from "./github-api.js"
import { credentialEnv, takeCredentials } from "./github-credentials.js"
import { type GithubRequest, oneLine, promptOf, requestOf, type Thread } from "./github-event.js"
import { checkoutPull, landChange, type PullTarget } from "./github-land.js"
import { runRules } from "./run-input.js"

const DEFAULT_TRIGGER = "/lathe"
const DEFAULT_MAX_COST = "2"
const DEFAULT_PERMISSIONS = "write,maintain,admin"

/** `lathe github run`, declared once for the command kit. */
export const githubRunSpec = defineCommand({
  name: "github run",
  summary: "Answer the GitHub event of this Actions job: check the author, run the turn, push, open the PR",
  description: `Run by a GitHub Actions workflow (lathe github install writes one). It reads the event
(GITHUB_EVENT_NAME, GITHUB_EVENT_PATH), finds the trigger in the comment, issue or pull request, checks the author's
permission through the REST API (GITHUB_API_URL, GITHUB_TOKEN) and, for an allowed author only, runs one turn in this
checkout with a cost budget. Changed files are committed on a new branch lathe/<issue>-<id> and a pull request is
opened; on a pull request they are pushed to its branch, or, when that is a fork's or the push is refused, put on a
branch lathe/pr-<n>-<id> with a pull request of their own. The answer, cost and steps are posted as a comment. The thread goes into the prompt as untrusted material, never as instructions (docs/github.md).`,
  options: {
    trigger: {
      type: "string",
      value: "<word>",
      description: `The mention that starts a run (default ${DEFAULT_TRIGGER})`
    },
    model: { type: "string", short: "m", value: "<p/m>", description: "The model, as provider/model" },
    "max-cost": {
      type: "string",
      value: "<usd>",
      description: `The turn's cost budget in USD (default ${DEFAULT_MAX_COST}); over it the run stops, exit 3`
    },
    "author-permissions": {
      type: "string",
      value: "<list>",
      description: `Comma-separated repository permissions that may start a run (default ${DEFAULT_PERMISSIONS})`
    },
    "allow-bots": { type: "boolean", description: "Let bot accounts start runs (refused by default)" },
    allow: {
      type: "string",
      multiple: true,
      value: "<rule>",
      description: "Allow what the rule names for this run, as lathe run --allow (repeatable)"
    },
    deny: {
      type: "string",
      multiple: true,
      value: "<rule>",
      description: "Deny what the rule names for this run, as lathe run --deny (repeatable)"
    }
  },
  footer: `Exit codes: 0 answered, refused or nothing to do; 1 failed (said in a comment); 2 bad usage;
3 cost budget exhausted.`
})

/** `lathe github install`, declared once for the command kit. */
export const githubInstallSpec = defineCommand({
  name: "github install",
  summary: "Write the workflow that runs Lathe on mentions into .github/workflows/lathe.yml",
  description: `Writes .github/workflows/lathe.yml in this repository: it runs the Lathe action on comments,
issues and pull requests that mention the trigger, with the token permissions it needs and no more, and prints the
secrets to add (the provider's API key). It does not overwrite an existing file without --force.`,
  options: {
    model: { type: "string", short: "m", value: "<p/m>", description: "The model the workflow runs (provider/model)" },
    trigger: { type: "string", value: "<word>", description: `The mention (default ${DEFAULT_TRIGGER})` },
    "max-cost": { type: "string", value: "<usd>", description: `Cost budget per run (default ${DEFAULT_MAX_COST})` },
    action: {
      type: "string",
      value: "<ref>",
      description: "The action to use (default lathe-dev/lathe@main)"
    },
    force: { type: "boolean", description: "Overwrite an existing workflow file" }
  }
})

/** `lathe github`: its subcommands. */
export const githubSpec = defineCommand({
  name: "github",
  usage: ["run [options]", "install [options]"],
  description: "Lathe in GitHub Actions: answer mentions on issues and pull requests (docs/github.md).",
  subcommands: [githubRunSpec, githubInstallSpec]
})

/** `lathe github`. */
export const githubCommand: Command = async (args, io) => {
  const picked = pickSubcommand(githubSpec, args, io)
  if (typeof picked === "number") return picked
  if (picked.name === "install") return installCommand(picked.rest, io)
  try {
    return await runGithub(picked.rest, io)
  } catch (error) {
    // A REST call outside the turn failed (the permission check, the refusal comment): said in one line, exit 1.
    if (!(error instanceof GithubApiError)) throw error
    io.stderr(`lathe github: ${plainText(error.message)}\n`)
    return 1
  }
}

/** Runs git with argv (no shell) in `cwd`; throws with git's stderr when it fails. */
const git = async (cwd: string, env: Readonly<Record<string, string>>, ...args: Array<string>): Promise<string> => {
  const result = await spawnProgram({ file: "git", args, cwd, env, timeoutMs: 120_000 })
  if (result.exitCode !== 0)
    throw new Error(`git ${args[0] ?? ""} failed: ${oneLine(result.stderr || result.stdout, 300)}`)
  return result.stdout
}

/** The names of the variables that must not reach the agent's programs: the job's tokens. */
const TOKEN_VARIABLES = [
  "GITHUB_TOKEN",
  "GH_TOKEN",
  "ACTIONS_RUNTIME_TOKEN",
  "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
  "INPUT_GITHUB-TOKEN"
]

/** What the turn did, read from its `run.result` line. */
interface TurnResult {
  readonly code: number
  readonly answer: string
  readonly cost: number
  readonly steps: number
  readonly error: string | undefined
}

/** Runs the turn with `lathe run`'s own machinery, in this process, and reads its closing `run.result` line. */
const runTurn = async (
  io: CliIO,
  env: Record<string, string | undefined>,
  args: Array<string>
): Promise<TurnResult> => {
  const { runCommand } = await import("./run.js")
  let out = ""
  let lastError = ""
  // No stdin: the prompt is the whole message, and no terminal means asks only a person may answer are refused.
  const { stdin: _stdin, ...rest } = io
  const code = await runCommand(args, {
    ...rest,
    env,
    isTTY: false,
    stdinIsTTY: false,
    stdout: (text) => {
      out += text
    },
    stderr: (text) => {
      if (text.startsWith("lathe")) lastError = text.trim()
      io.stderr(text)
    }
  })
  const line = out
    .split("\n")
    .filter((l) => l.startsWith('{"type":"run.result"'))
    .at(-1)
  const result = line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>)
  const error = result?.error as { message?: string } | undefined
  return {
    code,
    answer: typeof result?.result === "string" ? result.result : "",
    cost: typeof result?.cost === "number" ? result.cost : 0,
    steps: typeof result?.steps === "number" ? result.steps : 0,
    error: code === 0 ? undefined : (error?.message ?? (lastError || `the run ended with exit code ${code}`))
  }
}

/**
 * The env git runs with: this process's less the job's tokens and every secret-looking variable, as bash gets it (a
 * hook or filter the checkout configures runs with it). Lathe's own fetch and push add their credentials per command.
 */
const gitEnv = (env: Readonly<Record<string, string | undefined>>): Record<string, string> => {
  const out: Record<string, string | undefined> = { ...env }
  for (const key of TOKEN_VARIABLES) delete out[key]
  return { ...scrubEnv(out).env, GIT_TERMINAL_PROMPT: "0" }
}

/** `lathe github run`. */
const runGithub = async (args: ReadonlyArray<string>, io: CliIO): Promise<number> => {
  const parsed = parseCommand(githubRunSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values } = parsed
  const say = (text: string) => io.stderr(`lathe github: ${plainText(text)}\n`)
  const env = io.env
  const eventName = env.GITHUB_EVENT_NAME ?? ""
  const eventPath = env.GITHUB_EVENT_PATH ?? ""
  const repository = env.GITHUB_REPOSITORY ?? ""
  const token = env.GITHUB_TOKEN ?? ""
  if (eventPath === "" || repository === "" || token === "") {
    say("GITHUB_EVENT_PATH, GITHUB_REPOSITORY and GITHUB_TOKEN must be set (this runs in a GitHub Actions job).")
    return 2
  }
  const trigger = values.trigger ?? DEFAULT_TRIGGER
  const maxCost = values["max-cost"] ?? DEFAULT_MAX_COST
  const allowed = (values["author-permissions"] ?? DEFAULT_PERMISSIONS)
    .split(",")
    .map((p) => p.trim().toLowerCase())
    .filter((p) => p !== "")
  // The turn's rules are checked before anything is asked of GitHub or the model: a mistyped input fails the job at once.
  const rules = runRules(values.allow, values.deny)
  if (typeof rules === "string") {
    say(rules)
    return 2
  }
  let payload: unknown
  try {
    payload = JSON.parse(readFileSync(eventPath, "utf8"))
  } catch (error) {
    say(`cannot read the event at ${eventPath}: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  }
  const request = requestOf(eventName, payload, trigger)
  if ("skip" in request) {
    say(`nothing to do: ${request.skip}.`)
    return 0
  }
  const api = githubApi(env.GITHUB_API_URL || "https://api.github.com", token, repository)
  // The token stays with this process: the turn's programs (bash, MCP servers, git hooks) never see it.
  const childEnv: Record<string, string | undefined> = { ...env }
  for (const key of TOKEN_VARIABLES) {
    delete childEnv[key]
    delete process.env[key]
  }
  const post = async (body: string) => {
    if (request.number === undefined) io.stdout(`${body}\n`)
    else await api.comment(request.number, body)
  }

  // Who may ask comes first: a refused author gets one comment, and no model is asked anything.
  const refusal = await authorRefusal(api, request, allowed, values["allow-bots"] === true)
  if (refusal !== undefined) {
    say(`refused @${request.author.login}: ${refusal}`)
    await post(`Sorry @${request.author.login}, I only act for ${refusal}. Nothing was run.`)
    return 0
  }

  const runLink =
    env.GITHUB_RUN_ID && env.GITHUB_SERVER_URL
      ? `${env.GITHUB_SERVER_URL}/${repository}/actions/runs/${env.GITHUB_RUN_ID}`
      : undefined
  if (request.comment !== undefined)
    await api.react({ kind: request.comment.kind, id: request.comment.id }, "eyes").catch(() => undefined)
  else if (request.number !== undefined)
    await api.react({ kind: "thread", id: request.number }, "eyes").catch(() => undefined)
  const working =
    request.number === undefined
      ? undefined
      : await api.comment(request.number, `Working on it…${runLink ? ` ([run](${runLink}))` : ""}`)
  const report = async (body: string) => {
    const text = `${body}${runLink ? `\n\n[View the run](${runLink})` : ""}`
    // The job's log shows it too: the comment is where people read it, the log where a maintainer checks a run.
    io.stdout(`${text}\n`)
    if (working !== undefined) await api.updateComment(working, text)
  }

  try {
    const cwd = io.cwd
    const genv = gitEnv(childEnv)
    // The job's git credentials leave the checkout's config before the turn; only Lathe's own fetch and push get them.
    const auth =
      env.GITHUB_ACTIONS === "true"
        ? credentialEnv(await takeCredentials(cwd, genv, token, env.GITHUB_SERVER_URL || "https://github.com"))
        : {}
    const run = (...args: Array<string>) =>
      git(cwd, args[0] === "fetch" || args[0] === "push" ? { ...genv, ...auth } : genv, ...args)
    // A pull request's thread (its diff, review comments), and its head checked out for the fix.
    const thread: Thread = {}
    let target: PullTarget | undefined
    if (request.pullRequest && request.number !== undefined) {
      Object.assign(thread, {
        diff: await api.diff(request.number).catch(() => ""),
        reviewComments: await api.reviewComments(request.number).catch(() => [])
      })
      target = await checkoutPull(run, api, request.number, repository)
    }

    const runArgs = ["--format", "json", "--max-cost", maxCost]
    if (values.model !== undefined) runArgs.push("--model", values.model)
    for (const rule of values.allow ?? []) runArgs.push("--allow", rule)
    for (const rule of values.deny ?? []) runArgs.push("--deny", rule)
    runArgs.push("--", promptOf(request, thread, repository))
    const turn = await runTurn(io, childEnv, runArgs)
    const figures = `Cost: $${turn.cost.toFixed(4)} · steps: ${turn.steps}`
    if (turn.code !== 0) {
      await report(`Lathe could not finish this request: ${oneLine(turn.error ?? "unknown error", 500)}\n\n${figures}`)
      return turn.code
    }

    const changed = (await run("status", "--porcelain")).trim() !== ""
    const landed = changed
      ? (
          await landChange({
            git: run,
            api,
            request,
            target,
            answer: turn.answer,
            shortId: randomBytes(4).toString("hex")
          })
        ).text
      : ""
    await report([turn.answer.trim() || "(no answer)", landed, figures].filter((l) => l !== "").join("\n\n"))
    return 0
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    say(message)
    await report(`Lathe could not finish this request: ${oneLine(message, 500)}`).catch(() => undefined)
    return 1
  }
}

/** Why the author may not start a run (a phrase for the refusal comment), or undefined when they may. */
const authorRefusal = async (
  api: GithubApi,
  request: GithubRequest,
  allowed: ReadonlyArray<string>,
  allowBots: boolean
): Promise<string | undefined> => {
  const who = `collaborators with ${allowed.join(", ")} permission`
  if (request.author.bot && !allowBots) return `people (bot accounts are refused), and only ${who}`
  const { permission, role } = await api
    .permission(request.author.login)
    .catch(() => ({ permission: "none", role: "" }))
  return allowed.includes(permission) || (role !== "" && allowed.includes(role)) ? undefined : who
}

/** The workflow `lathe github install` writes. */
export const workflowText = (options: {
  readonly action: string
  readonly trigger: string
  readonly model: string | undefined
  readonly maxCost: string
  readonly keyVariable: string | undefined
}): string => {
  const quoted = (text: string) => JSON.stringify(text)
  return `# Written by lathe github install: runs Lathe when a comment, issue or pull request mentions ${options.trigger}.
# Only collaborators with write, maintain or admin permission start a run (checked by Lathe through the API).
# Events from forks run without secrets (GitHub's rule for pull_request); see docs/github.md.
name: Lathe

on:
  issue_comment:
    types: [created]
  pull_request_review_comment:
    types: [created]
  issues:
    types: [opened, assigned]
  workflow_dispatch:
    inputs:
      prompt:
        description: What Lathe should do
        required: true

# The token gets only what answering and opening pull requests needs.
permissions:
  contents: write
  issues: write
  pull-requests: write

jobs:
  lathe:
    if: >-
      github.event_name == 'workflow_dispatch' ||
      contains(github.event.comment.body, ${quoted(options.trigger).replaceAll('"', "'")}) ||
      contains(github.event.issue.body, ${quoted(options.trigger).replaceAll('"', "'")})
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
          # The token stays out of .git/config, where the agent could read it; Lathe pushes with it in memory.
          persist-credentials: false
      - uses: ${options.action}
        with:
${options.model === undefined ? "" : `          model: ${quoted(options.model)}\n`}          max-cost: ${quoted(options.maxCost)}
          trigger: ${quoted(options.trigger)}
          author-permissions: write,maintain,admin
          # Rules the turn may use without asking, one per line, as lathe run --allow takes them:
          # allowed-permissions: |
          #   bash:npm test
${options.keyVariable === undefined ? "" : `        env:\n          ${options.keyVariable}: \${{ secrets.${options.keyVariable} }}\n`}`
}

/** The API key variable of a provider, for the secrets `install` names. */
const KEY_VARIABLES: Readonly<Record<string, string>> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  google: "GOOGLE_GENERATIVE_AI_API_KEY",
  openrouter: "OPENROUTER_API_KEY",
  mistral: "MISTRAL_API_KEY",
  groq: "GROQ_API_KEY",
  deepseek: "DEEPSEEK_API_KEY",
  xai: "XAI_API_KEY"
}

/** `lathe github install`. */
const installCommand = async (args: ReadonlyArray<string>, io: CliIO): Promise<number> => {
  const parsed = parseCommand(githubInstallSpec, args, io)
  if (typeof parsed === "number") return parsed
  const { values } = parsed
  const trigger = values.trigger ?? DEFAULT_TRIGGER
  if (!/^[/@]?[A-Za-z0-9_-]+$/.test(trigger)) {
    io.stderr(
      `lathe github install: the trigger must be one word such as /lathe or @lathe, not "${plainText(trigger)}".\n`
    )
    return 2
  }
  const maxCost = values["max-cost"] ?? DEFAULT_MAX_COST
  if (!/^\d+(\.\d+)?$/.test(maxCost)) {
    io.stderr(`lathe github install: --max-cost must be a number of USD, not "${plainText(maxCost)}".\n`)
    return 2
  }
  const model = values.model
  if (model !== undefined && !/^[A-Za-z0-9._-]+\/[A-Za-z0-9._:/-]+$/.test(model)) {
    io.stderr(`lathe github install: --model must be provider/model, not "${plainText(model)}".\n`)
    return 2
  }
  const action = values.action ?? "lathe-dev/lathe@main"
  if (!/^(\.\/[\w./-]*|[\w.-]+\/[\w./-]+@[\w./-]+)$/.test(action)) {
    io.stderr(`lathe github install: --action must be owner/repo@ref or ./path, not "${plainText(action)}".\n`)
    return 2
  }
  const provider = model?.split("/")[0]
  const keyVariable =
    provider === undefined
      ? "ANTHROPIC_API_KEY"
      : (KEY_VARIABLES[provider] ?? `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`)
  const file = join(io.cwd, ".github", "workflows", "lathe.yml")
  if (existsSync(file) && values.force !== true) {
    io.stderr("lathe github install: .github/workflows/lathe.yml exists; --force overwrites it.\n")
    return 1
  }
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, workflowText({ action, trigger, model, maxCost, keyVariable }))
  io.stdout(
    [
      "Wrote .github/workflows/lathe.yml.",
      "",
      "Add this secret to the repository (Settings → Secrets and variables → Actions):",
      `  ${keyVariable}   the provider's API key`,
      "",
      `Then commit the workflow; a comment such as "${trigger} fix the typo" from a collaborator with write access`,
      "starts a run. The workflow's token permissions and the threat model: docs/github.md.",
      ""
    ].join("\n")
  )
  return 0
}
