/**
 * `lathe completion bash|zsh|fish`, loaded into the real shells: commands, subcommands, options and their choices
 * come from the script itself; agent and model names from `lathe completion --list`, run through a `lathe` on PATH
 * (the CLI from source) in a trusted project that defines its own agents and provider.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the drivers are shell code, whose ${…} are the shell's
import { spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { runSpec } from "../src/commands/run.js"
import { runLathe, sandbox } from "./helpers.js"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
/** `lathe run --format`'s values, from the spec the script is written from. */
const formats: ReadonlyArray<string> = runSpec.options?.format.choices ?? []
const tsx = import.meta.resolve("tsx")

const box = sandbox()
const shims = join(box.dir, "bin")
const env = { ...box.env, PATH: `${shims}:${box.env.PATH}` }
const scripts: Record<"bash" | "zsh" | "fish", string> = { bash: "", zsh: "", fish: "" }

const hasShell = (shell: string): boolean => spawnSync("sh", ["-c", `command -v ${shell}`]).status === 0

/** Runs `shell args` in the project, with the `lathe` shim on PATH unless `withLathe` is false; its stdout. */
const inShell = (shell: string, args: ReadonlyArray<string>, withLathe = true): string => {
  const result = spawnSync(shell, args, {
    cwd: box.project,
    env: withLathe ? env : box.env,
    encoding: "utf8",
    timeout: 120_000
  })
  expect(result.stderr).toBe("")
  expect(result.status).toBe(0)
  return result.stdout
}

/**
 * What Tab offers after each command line, as bash's completion function `_lathe` computes it: the line split at
 * spaces into COMP_WORDS (a trailing space: an empty word being completed), the last word the one completed.
 */
const bashCompletes = (lines: ReadonlyArray<string>, withLathe = true): ReadonlyArray<ReadonlyArray<string>> => {
  const driver = join(box.dir, "drive.bash")
  writeFileSync(
    driver,
    [
      'source "$1"; shift',
      'for line in "$@"; do',
      '  read -ra COMP_WORDS <<< "$line"',
      '  [[ $line == *" " ]] && COMP_WORDS+=("")',
      "  COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) COMP_LINE=$line COMP_POINT=${#line} COMPREPLY=()",
      "  _lathe",
      '  echo "${COMPREPLY[*]}"',
      "done",
      ""
    ].join("\n")
  )
  const out = inShell("bash", ["--noprofile", "--norc", driver, join(box.dir, "lathe.bash"), ...lines], withLathe)
  return out
    .split("\n")
    .slice(0, lines.length)
    .map((line) => (line === "" ? [] : line.split(" ")))
}

/** The commands `lathe --help` lists. */
const helpCommands = (help: string): ReadonlyArray<string> => {
  const section = help.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? ""
  return [...section.matchAll(/^ {2}([a-z][a-z-]*) {2,}/gm)].map((m) => m[1] ?? "")
}

beforeAll(async () => {
  mkdirSync(shims, { recursive: true })
  const shim = join(shims, "lathe")
  writeFileSync(
    shim,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} --conditions=@lathe/source --import ${JSON.stringify(tsx)} ${JSON.stringify(bin)} "$@"\n`
  )
  chmodSync(shim, 0o755)
  writeFileSync(
    join(box.project, "lathe.json"),
    JSON.stringify({
      agent: {
        reviewer: { mode: "primary", description: "Reviews diffs" },
        digger: { mode: "subagent", description: "Digs" }
      },
      provider: {
        local: { type: "openai-compatible", baseURL: "http://127.0.0.1:9/v1", models: { tiny: {}, "big:8b": {} } }
      }
    })
  )
  const trusted = await runLathe(["trust"], { cwd: box.project, env })
  expect(trusted.code).toBe(0)
  for (const shell of ["bash", "zsh", "fish"] as const) {
    const run = await runLathe(["completion", shell], { cwd: box.project, env })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    scripts[shell] = run.stdout
    writeFileSync(join(box.dir, `lathe.${shell}`), run.stdout)
  }
}, 180_000)

describe("lathe completion bash", () => {
  it("registers _lathe for lathe in a real bash", () => {
    expect(inShell("bash", ["--noprofile", "--norc", "-c", "source <(lathe completion bash); complete -p lathe"])).toBe(
      "complete -F _lathe lathe\n"
    )
  }, 60_000)

  it("completes commands, subcommands, options and their choices without starting lathe", () => {
    const choices = formats
    expect(choices).toContain("json")
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["lathe ru", ["run", "runner"]],
      ["lathe run --for", ["--format"]],
      ["lathe run --format ", choices],
      // Without bash-completion's helpers, bash splits --format=j at the =.
      ["lathe run --format = j", choices.filter((choice) => choice.startsWith("j"))],
      ["lathe run -m x --variant ", ["low", "medium", "high"]],
      ["lathe session ", ["list", "show"]],
      ["lathe session list --l", ["--limit"]],
      ["lathe config ", ["schema"]],
      ["lathe completion ", ["bash", "zsh", "fish"]],
      ["lathe --ver", ["--version"]],
      // A prompt, or anything after --, is not a command: nothing to offer.
      ["lathe hello ", []],
      ["lathe run -- --f", []]
    ]
    // No lathe on PATH: the script holds all of this, pressing Tab starts nothing.
    const offered = bashCompletes(
      cases.map(([line]) => line),
      false
    )
    expect(cases.map(([line], i) => [line, offered[i]])).toEqual(cases.map(([line, want]) => [line, want]))
  })

  it("offers every command lathe --help lists, each with its options", async () => {
    const help = await runLathe(["--help"], { cwd: box.project, env })
    const commands = helpCommands(help.stdout)
    expect(commands).toContain("completion")
    const [top = [], ...each] = bashCompletes(["lathe ", ...commands.map((command) => `lathe ${command} --h`)])
    expect([...top].sort()).toEqual([...commands].sort())
    // A command whose options the script lacks (missing from commands/specs.ts) would offer nothing here.
    expect(commands.filter((_, i) => !each[i]?.includes("--help"))).toEqual([])
  }, 60_000)

  it("asks lathe for the project's primary agents and the models of the providers set up", () => {
    const [agents, models, typed] = bashCompletes(["lathe run --agent ", "lathe -m ", "lathe run -m local/t"])
    expect(agents).toEqual(["build", "plan", "reviewer"])
    expect([...(models ?? [])].sort()).toEqual(["local/big:8b", "local/tiny"])
    expect(typed).toEqual(["local/tiny"])
  }, 120_000)
})

const BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"

describe("lathe completion bash with bash-completion loaded", () => {
  it.skipIf(!existsSync(BASH_COMPLETION))(
    "takes --opt=value and model ids with a colon as one word",
    () => {
      // As bash splits the line (COMP_WORDBREAKS holds = and :); bash-completion puts the words back together.
      const driver = [
        `source ${BASH_COMPLETION}`,
        'source "$1"; shift',
        'for line in "$@"; do',
        "  COMP_LINE=$line COMP_POINT=${#line}",
        '  read -ra COMP_WORDS <<< "$(sed -E \'s/([=:])/ \\1 /g\' <<< "$line")"',
        '  [[ $line == *[[:space:]=:] ]] && COMP_WORDS+=("")',
        "  COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) COMPREPLY=()",
        "  _lathe",
        '  echo "${COMPREPLY[*]}"',
        "done"
      ].join("\n")
      const out = inShell("bash", [
        "--noprofile",
        "--norc",
        "-c",
        driver,
        "bash",
        join(box.dir, "lathe.bash"),
        "lathe run --format=j",
        "lathe run -m local/big:",
        "lathe run -m local/b"
      ])
      // Readline replaces the text after the last = or :, so that is what is offered.
      expect(out.split("\n").slice(0, 3)).toEqual([
        formats.filter((format) => format.startsWith("j")).join(" "),
        "8b",
        "local/big:8b"
      ])
    },
    60_000
  )
})

describe("lathe completion", () => {
  it("refuses a shell it has no script for, with the nearest", async () => {
    const run = await runLathe(["completion", "bsh"], { cwd: box.project, env })
    expect(run.code).toBe(2)
    expect(run.stdout).toBe("")
    expect(run.stderr).toContain('no completion for the shell "bsh": bash, zsh or fish. Did you mean bash?')
  }, 60_000)

  it.skipIf(!hasShell("zsh"))(
    "writes a zsh script that parses and walks to the command typed",
    () => {
      inShell("zsh", ["-n", join(box.dir, "lathe.zsh")])
      // zsh's completion system needs a terminal: its builtins are stood in for, the script's own logic runs.
      const driver = [
        "compdef() { :; }",
        'source "$1"; shift',
        'compadd() { while [[ $1 != -- ]]; do shift; done; shift; print -r -- "$@"; }',
        "_describe() { local name=${@[-1]}; print -r -- ${${(P)name}%%:*}; }",
        "compset() { :; }",
        "_files() { print FILES; }",
        'for line in "$@"; do',
        '  words=(${(z)line}); [[ $line == *" " ]] && words+=("")',
        "  CURRENT=${#words}",
        "  print -r -- $(_lathe)",
        "done"
      ].join("\n")
      const out = inShell("zsh", [
        "-f",
        "-c",
        driver,
        "zsh",
        join(box.dir, "lathe.zsh"),
        "lathe session ",
        "lathe run --format ",
        "lathe run --variant=",
        "lathe export -o ",
        "lathe run --agent "
      ])
      expect(out.split("\n").slice(0, 5)).toEqual([
        "list show",
        formats.join(" "),
        "low medium high",
        "FILES",
        "build plan reviewer"
      ])
    },
    120_000
  )

  it.skipIf(!hasShell("fish"))(
    "writes a fish script that fish completes with",
    () => {
      inShell("fish", ["--no-execute", join(box.dir, "lathe.fish")])
      const complete = (line: string) =>
        inShell("fish", ["--no-config", "-c", `source ${join(box.dir, "lathe.fish")}; complete -C '${line}'`])
          .split("\n")
          .filter(Boolean)
          .map((entry) => entry.split("\t")[0])
          .sort()
      expect(complete("lathe ru")).toEqual(["run", "runner"])
      expect(complete("lathe session ")).toEqual(["list", "show"])
      expect(complete("lathe run --for")).toEqual(["--format"])
      expect(complete("lathe run --format ")).toEqual([...formats].sort())
      expect(complete("lathe completion ")).toEqual(["bash", "fish", "zsh"])
      expect(complete("lathe run --agent ")).toEqual(["build", "plan", "reviewer"])
    },
    120_000
  )
})
