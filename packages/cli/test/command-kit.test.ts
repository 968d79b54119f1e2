import { assert, describe, it } from "vitest"
import { defineCommand, editDistance, helpText, parseCommand, pickSubcommand, suggest } from "../src/command-kit.js"

const spec = defineCommand({
  name: "run",
  summary: "Run once",
  usage: ["[options] <message...>"],
  description: "Runs one turn.",
  options: {
    model: { type: "string", short: "m", value: "<p/m>", description: "The model" },
    format: { type: "string", value: "<fmt>", choices: ["text", "json"], description: "text or json\nsecond line" },
    yes: { type: "boolean", short: "y", description: "Allow every ask" },
    header: { type: "string", multiple: true, value: "<k=v>", description: "A header" }
  },
  positionals: { name: "<message...>" },
  footer: "Exit codes: 0 done."
})

const parent = defineCommand({
  name: "session",
  summary: "Sessions",
  usage: ["<command>"],
  subcommands: [
    defineCommand({ name: "session list", summary: "List them" }),
    defineCommand({ name: "session show", summary: "Show one" })
  ]
})

/** Runs `parseCommand` with a recording IO. */
const parse = (args: ReadonlyArray<string>, of: Parameters<typeof parseCommand>[0] = spec) => {
  let stdout = ""
  let stderr = ""
  const result = parseCommand(of, args, {
    stdout: (t) => {
      stdout += t
    },
    stderr: (t) => {
      stderr += t
    }
  })
  return { result, stdout, stderr }
}

describe("command kit", () => {
  it("parses options, short aliases, repeated options and positionals", () => {
    const { result } = parse(["-m", "a/b", "--format=json", "-y", "--header", "a=1", "--header", "b=2", "fix", "it"])
    assert.notTypeOf(result, "number")
    if (typeof result === "number") return
    assert.deepStrictEqual(result.values as Record<string, unknown>, {
      model: "a/b",
      format: "json",
      yes: true,
      header: ["a=1", "b=2"]
    })
    assert.deepStrictEqual(result.positionals, ["fix", "it"])
  })

  it("takes everything after -- as positionals, even --help", () => {
    const { result } = parse(["--", "--help", "-y"])
    assert.deepStrictEqual(typeof result === "number" ? result : result.positionals, ["--help", "-y"])
  })

  it("derives --help: usage, description, options with placeholders, continuation lines, footer", () => {
    const { result, stdout, stderr } = parse(["--help"])
    assert.strictEqual(result, 0)
    assert.strictEqual(stderr, "")
    assert.strictEqual(stdout, helpText(spec))
    assert.include(stdout, "Usage: lathe run [options] <message...>\n\nRuns one turn.\n\nOptions:\n")
    assert.match(stdout, /\n {2}-m, --model <p\/m> +The model\n/)
    assert.match(stdout, /\n {6}--format <fmt> +text or json\n {20,}second line\n/)
    assert.match(stdout, /\n {2}-h, --help +Show this help\n/)
    assert.isTrue(stdout.endsWith("\nExit codes: 0 done.\n"))
  })

  it("prints help for -h even beside a bad option", () => {
    assert.strictEqual(parse(["--bogus", "-h"]).result, 0)
  })

  it("suggests the nearest option for a typo, in one line, exit 2", () => {
    const { result, stdout, stderr } = parse(["--formt", "json", "hi"])
    assert.strictEqual(result, 2)
    assert.strictEqual(stdout, "")
    assert.strictEqual(
      stderr,
      "lathe run: unknown option --formt. Did you mean --format? Run lathe run --help for the options.\n"
    )
  })

  it("suggests by prefix, and nothing for a word close to no option", () => {
    assert.include(parse(["--mod", "x"]).stderr, "Did you mean --model?")
    const far = parse(["--zzzzzz"])
    assert.strictEqual(far.result, 2)
    assert.notInclude(far.stderr, "Did you mean")
    assert.include(far.stderr, "unknown option --zzzzzz.")
  })

  it("refuses a string option without a value, and a value on a boolean", () => {
    const missing = parse(["--model"])
    assert.strictEqual(missing.result, 2)
    assert.include(missing.stderr, "option --model needs a value (-m, --model <p/m>).")
    assert.include(parse(["--model", "--yes"]).stderr, "needs a value")
    assert.include(parse(["--yes=1"]).stderr, 'option --yes takes no value (got "1")')
  })

  it("checks choices and suggests the nearest one", () => {
    const { result, stderr } = parse(["--format", "jsn"])
    assert.strictEqual(result, 2)
    assert.include(stderr, 'lathe run: --format must be "text" or "json", not "jsn". Did you mean json?')
  })

  it("refuses a positional a command does not take, without Node's error code", () => {
    const { result, stderr } = parse(["x"], defineCommand({ name: "config", summary: "Config" }))
    assert.strictEqual(result, 2)
    assert.strictEqual(
      stderr,
      'lathe config: unexpected argument "x" (it takes no arguments). Run lathe config --help for the options.\n'
    )
    assert.notInclude(stderr, "ERR_PARSE_ARGS")
  })

  it("picks a subcommand, suggests the nearest for a typo, lists them in help", () => {
    const io = (into: { out: string; err: string }) => ({
      stdout: (t: string) => {
        into.out += t
      },
      stderr: (t: string) => {
        into.err += t
      }
    })
    const seen = { out: "", err: "" }
    assert.deepStrictEqual(pickSubcommand(parent, ["list", "--all"], io(seen)), { name: "list", rest: ["--all"] })
    assert.strictEqual(pickSubcommand(parent, ["lst"], io(seen)), 2)
    assert.include(seen.err, 'lathe session: unknown subcommand "lst". Did you mean list?')
    assert.strictEqual(pickSubcommand(parent, ["--help"], io(seen)), 0)
    assert.match(seen.out, /Commands:\n {2}list +List them\n {2}show +Show one\n/)
    const bare = { out: "", err: "" }
    assert.strictEqual(pickSubcommand(parent, [], io(bare)), 2)
    assert.include(bare.err, "Usage: lathe session <command>")
    assert.deepStrictEqual(pickSubcommand(parent, [], io(bare), "list"), { name: "list", rest: [] })
  })

  it("suggest: closest within 2 edits, case-insensitive, none for unrelated words", () => {
    assert.strictEqual(suggest("modles", ["model", "models", "mcp"]), "models")
    assert.strictEqual(suggest("LST", ["list", "show"]), "list")
    assert.strictEqual(suggest("xyz", ["list", "show"]), undefined)
    assert.strictEqual(suggest("ab", ["cd"]), undefined)
    assert.strictEqual(editDistance("modles", "models"), 1)
    assert.strictEqual(editDistance("formt", "format"), 1)
  })
})
