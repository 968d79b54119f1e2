import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { type CustomCommand, expandTemplate, loadCustomCommands } from "../src/custom-commands.js"

let dir = ""
let root = ""
let configDir = ""
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "lathe-commands-"))
  root = join(dir, "project")
  configDir = join(dir, "config")
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const write = async (files: Record<string, string>): Promise<void> => {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true })
    await writeFile(join(dir, path), text)
  }
}
/** The folder is trusted (`lathe trust`): its commands may choose agent and model. */
const trusted = { trusted: true }
const byName = (commands: ReadonlyArray<CustomCommand>): Record<string, CustomCommand> =>
  Object.fromEntries(commands.map((c) => [c.name, c]))

describe("loadCustomCommands", () => {
  it("loads nothing, without problems, when no folder exists", async () => {
    assert.deepStrictEqual(await loadCustomCommands(root, configDir, trusted), { commands: [], problems: [] })
  })

  it("loads the three folders, names subfolders with ':' and lets the first definition win", async () => {
    await write({
      "project/.lathe/commands/review.md": "Review the diff from .lathe",
      "project/.lathe/commands/frontend/component.md": "Make a component",
      "project/.claude/commands/review.md": "Review from .claude",
      "project/.claude/commands/fix-issue.md": "Fix issue $1",
      "config/commands/review.md": "Review from the user",
      "config/commands/mine.md": "My own command",
      "config/commands/notes.txt": "not a command"
    })
    const { commands, problems } = await loadCustomCommands(root, configDir, trusted)
    assert.deepStrictEqual(problems, [])
    assert.deepStrictEqual(
      commands.map((c) => c.name),
      ["frontend:component", "review", "fix-issue", "mine"]
    )
    const named = byName(commands)
    assert.strictEqual(named.review?.template, "Review the diff from .lathe")
    assert.strictEqual(named.review?.source, join(root, ".lathe", "commands", "review.md"))
    assert.strictEqual(named["fix-issue"]?.source, join(root, ".claude", "commands", "fix-issue.md"))
    assert.strictEqual(named.mine?.source, join(configDir, "commands", "mine.md"))
  })

  it("reads description, agent and model from front matter, else describes by the first line", async () => {
    const long = "x".repeat(120)
    await write({
      "project/.lathe/commands/deploy.md": [
        "---",
        "description: Deploy to staging",
        "agent: build",
        "model: anthropic/claude-sonnet",
        "argument-hint: <env>",
        "---",
        "",
        "Deploy $ARGUMENTS now.",
        ""
      ].join("\n"),
      "project/.lathe/commands/plain.md": "# Summarise the repo\n\nRead everything.",
      "project/.lathe/commands/long.md": `${long}\nmore`
    })
    const { commands, problems } = await loadCustomCommands(root, configDir, trusted)
    assert.deepStrictEqual(problems, [])
    const named = byName(commands)
    assert.deepStrictEqual(named.deploy, {
      name: "deploy",
      description: "Deploy to staging",
      agent: "build",
      model: "anthropic/claude-sonnet",
      template: "Deploy $ARGUMENTS now.",
      source: join(root, ".lathe", "commands", "deploy.md")
    })
    assert.strictEqual(named.plain?.description, "Summarise the repo")
    assert.notProperty(named.plain, "agent")
    assert.strictEqual(named.plain?.template, "# Summarise the repo\n\nRead everything.")
    assert.strictEqual(named.long?.description.length, 80)
    assert.isTrue(named.long?.description.startsWith("xxx"))
  })

  it("reports a broken file with its path and a fix, and still loads the others", async () => {
    await write({
      "project/.lathe/commands/bad-yaml.md": "---\ndescription: [unclosed\n---\nbody",
      "project/.lathe/commands/unclosed.md": "---\ndescription: x\nbody",
      "project/.lathe/commands/wrong-type.md": "---\ndescription: 42\n---\nbody",
      "project/.lathe/commands/not-a-map.md": "---\n- a\n- b\n---\nbody",
      "project/.lathe/commands/my command.md": "body",
      "project/.lathe/commands/good.md": "fine"
    })
    const { commands, problems } = await loadCustomCommands(root, configDir, trusted)
    assert.deepStrictEqual(
      commands.map((c) => c.name),
      ["good"]
    )
    const problemOf = (file: string): string =>
      problems.find((p) => p.startsWith(join(root, ".lathe", "commands", file))) ?? "none"
    assert.strictEqual(problems.length, 5)
    assert.match(problemOf("bad-yaml.md"), /not valid YAML .*fix it/)
    assert.match(problemOf("unclosed.md"), /never closed: add a line "---"/)
    assert.match(problemOf("wrong-type.md"), /description: .*quoted string/)
    assert.match(problemOf("not-a-map.md"), /key: value/)
    assert.match(problemOf("my command.md"), /cannot contain spaces; rename/)
  })
})

// "Walls, round three": an untrusted project's command files may not choose the model (your account, your bill) or
// the agent (wider tools and rules than yours); the person's own commands keep both.
describe("loadCustomCommands in an untrusted project", () => {
  const choosing = "---\ndescription: Ship it\nmodel: local/expensive\nagent: build\n---\nShip $ARGUMENTS"

  it("drops model and agent from every project place and names them; keeps the person's own", async () => {
    await write({
      "project/.lathe/commands/a.md": choosing,
      "project/.claude/commands/b.md": choosing,
      "project/.opencode/command/c.md": "---\nmodel: local/expensive\n---\nC",
      "project/.opencode/commands/d.md": "---\nagent: build\n---\nD",
      "project/.claude/commands/plain.md": "Just a prompt",
      "project/opencode.json": JSON.stringify({ command: { e: { template: "E", agent: "build", model: "x/y" } } }),
      "config/commands/mine.md": choosing
    })
    const { commands, problems, ignored } = await loadCustomCommands(root, configDir, { trusted: false })
    assert.deepStrictEqual(problems, [])
    const named = byName(commands)
    for (const name of ["a", "b", "c", "d", "e"]) {
      assert.notProperty(named[name], "model", name)
      assert.notProperty(named[name], "agent", name)
    }
    // The rest of the command stays: it runs, with the person's agent and model.
    assert.strictEqual(named.a?.description, "Ship it")
    assert.strictEqual(named.a?.template, "Ship $ARGUMENTS")
    assert.deepInclude(named.mine ?? {}, { model: "local/expensive", agent: "build" })
    assert.isDefined(ignored)
    assert.match(ignored ?? "", /^Ignored from untrusted /)
    assert.include(ignored, `${join(root, ".lathe", "commands", "a.md")}: command a model, agent`)
    assert.include(ignored, `${join(root, ".claude", "commands", "b.md")}: command b model, agent`)
    assert.include(ignored, `${join(root, ".opencode", "command", "c.md")}: command c model`)
    assert.include(ignored, `${join(root, ".opencode", "commands", "d.md")}: command d agent`)
    assert.include(ignored, `${join(root, "opencode.json")}: command e model, agent`)
    assert.notInclude(ignored, "plain")
    assert.notInclude(ignored, "mine")
    assert.include(ignored, `Run \`lathe trust\` in ${root}`)
  })

  it("a project command cannot take a name from the person's own to keep its choices", async () => {
    await write({ "project/.claude/commands/mine.md": choosing, "config/commands/mine.md": "My own" })
    const { commands } = await loadCustomCommands(root, configDir, { trusted: false })
    // The project's file comes first and wins the name, but without model or agent.
    assert.deepStrictEqual(
      commands.map((c) => [c.name, c.template, c.model, c.agent]),
      [["mine", "Ship $ARGUMENTS", undefined, undefined]]
    )
  })

  it("says nothing when no project command chose a model or agent; a trusted project keeps both", async () => {
    await write({ "project/.claude/commands/plain.md": "Just a prompt" })
    assert.notProperty(await loadCustomCommands(root, configDir, { trusted: false }), "ignored")
    await write({ "project/.claude/commands/b.md": choosing })
    const loaded = await loadCustomCommands(root, configDir, trusted)
    assert.notProperty(loaded, "ignored")
    assert.deepInclude(byName(loaded.commands).b ?? {}, { model: "local/expensive", agent: "build" })
  })
})

describe("expandTemplate", () => {
  it("puts all arguments in place of $ARGUMENTS", () => {
    assert.strictEqual(expandTemplate("Fix: $ARGUMENTS.", "  the login bug "), "Fix: the login bug.")
    assert.strictEqual(expandTemplate("[$ARGUMENTS]", ""), "[]")
  })

  it("fills $1…$9 with shell-like split arguments, quotes respected, missing ones empty", () => {
    assert.strictEqual(
      expandTemplate("issue $1 by $2 in $3", `123 "Ada Lovelace" 'src/a b.ts'`),
      "issue 123 by Ada Lovelace in src/a b.ts"
    )
    assert.strictEqual(expandTemplate("$1|$2|$9", "one"), "one||")
    assert.strictEqual(expandTemplate("$1 $2", `a\\ b "c \\"d\\""`), `a b c "d"`)
    assert.strictEqual(expandTemplate("$2 then $ARGUMENTS", "x y"), "y then x y")
  })

  it("appends arguments after a blank line when the template has no placeholder", () => {
    assert.strictEqual(expandTemplate("Review the code.", "focus on tests"), "Review the code.\n\nfocus on tests")
    assert.strictEqual(expandTemplate("Review the code.", "   "), "Review the code.")
  })
})
