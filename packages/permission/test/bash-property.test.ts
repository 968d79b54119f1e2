import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { analyzeWith, loadBashParser } from "../src/bash.js"
import { decide, project, rules } from "./decide.js"

// Properties of the analyser over random compositions: a denied program is never allowed however it is
// wrapped, quoted, nested or separated; ordinary commands under "*": "allow" with no deny rule stay allowed.
const parser = await loadBashParser()
const context = project()
const RUNS = Number(process.env.LATHE_PROPERTY_RUNS ?? 400)

const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

/** Ways to spell the program name `rm` that the shell resolves statically. */
const rmSpellings = [
  "rm",
  "\\rm",
  "'rm'",
  '"rm"',
  "r''m",
  'r""m',
  "$'rm'",
  "$'\\x72m'",
  "$'\\162m'",
  "/bin/rm",
  "/usr/bin/rm",
  '$"rm"'
]
/** Spellings that stay dynamic: the command is unknown. */
const dynamicSpellings = ["$CMD", "$" + "{X}m", "$(echo rm)", "`echo rm`", "/bin/r?", "r$" + "{IFS}m", "$'\\x72'$M"]
const wrappers = [
  "sudo",
  "sudo -u root",
  "doas",
  "env",
  "env X=1",
  "env -i",
  "/usr/bin/env",
  "nohup",
  "timeout 5",
  "timeout -s KILL 5",
  "nice -n 5",
  "command",
  "builtin",
  "exec",
  "exec -a x",
  "time",
  "time -p",
  "stdbuf -oL",
  "setsid",
  "ionice -c 3",
  "chroot /",
  "X=1",
  "busybox",
  "watch -x"
]
const argsOf = ["-rf x", "x", "-f -- x", "$TARGET", "*.log", "{a,b}", '"$@"', "''"]
const redirects = ["", " > out.txt", " 2>/dev/null", " < a.txt", " >> log 2>&1", " &> /dev/null"]
const separators = ["; ", " && ", " || ", " | ", " & ", "\n"]
const benign = ["ls", "echo hi", "git status", "true", "cat a.txt"]

type Wrap = (inner: string) => string
const containers: ReadonlyArray<Wrap> = [
  (inner) => inner,
  (inner) => `(${inner})`,
  (inner) => `{ ${inner}; }`,
  (inner) => `echo $(${inner})`,
  (inner) => `echo "$(${inner})"`,
  (inner) => `bash -c ${quote(inner)}`,
  (inner) => `sh -ec ${quote(inner)}`,
  (inner) => `eval ${quote(inner)}`,
  (inner) => `if true; then ${inner}; fi`,
  (inner) => `for i in 1; do ${inner}; done`,
  (inner) => `f() { ${inner}; }; f`,
  (inner) => `cat <(${inner})`,
  (inner) => `bash <<< ${quote(inner)}`,
  (inner) => `trap ${quote(inner)} EXIT`,
  (inner) => `watch ${quote(inner)}`,
  (inner) => `! ${inner}`
]

const denied = fc
  .record({
    name: fc.oneof(fc.constantFrom(...rmSpellings), fc.constantFrom(...dynamicSpellings)),
    wrappers: fc.array(fc.constantFrom(...wrappers), { maxLength: 3 }),
    args: fc.constantFrom(...argsOf),
    redirect: fc.constantFrom(...redirects),
    nest: fc.array(fc.constantFrom(...containers), { maxLength: 3 }),
    before: fc.option(fc.tuple(fc.constantFrom(...benign), fc.constantFrom(...separators))),
    after: fc.option(fc.tuple(fc.constantFrom(...separators), fc.constantFrom(...benign)))
  })
  .map(({ name, wrappers, args, redirect, nest, before, after }) => {
    let line = `${[...wrappers, name].join(" ")} ${args}${redirect}`
    for (const wrap of nest) line = wrap(line)
    return `${before ? before.join("") : ""}${line}${after ? after.join("") : ""}`
  })

describe("bash analysis properties", () => {
  const denyRm = rules({ "*": "allow", bash: { "*": "allow", "rm *": "deny" } })

  it("a denied program is never allowed, however it is wrapped, quoted, nested or separated", () => {
    fc.assert(
      fc.property(denied, (line) => {
        const decision = decide(parser, context, denyRm, line)
        return decision === "deny" || decision === "person"
      }),
      { numRuns: RUNS }
    )
  })

  it("ordinary commands under '*': 'allow' with no deny rule stay allowed", () => {
    const allowAll = rules({ "*": "allow" })
    const ordinary = fc.constantFrom(
      ...benign,
      "npm test",
      "grep -rn foo src",
      "rm -rf build",
      "python3 -c 'print(1)'",
      "echo x | sh",
      "$CMD x",
      "cp a.txt /tmp/b",
      "touch ~/x"
    )
    const composed = fc
      .record({
        parts: fc.array(fc.tuple(fc.constantFrom(...wrappers), ordinary, fc.constantFrom(...redirects)), {
          minLength: 1,
          maxLength: 4
        }),
        separator: fc.constantFrom(...separators),
        nest: fc.array(fc.constantFrom(...containers), { maxLength: 2 })
      })
      .map(({ parts, separator, nest }) => {
        let line = parts.map(([wrapper, command, redirect]) => `${wrapper} ${command}${redirect}`).join(separator)
        for (const wrap of nest) line = wrap(line)
        return line
      })
    fc.assert(
      fc.property(composed, (line) => decide(parser, context, allowAll, line) === "allow"),
      { numRuns: RUNS }
    )
  })

  it("quoting a static word any way the shell allows gives the same argv", () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9._-]{0,8}$/)
    const spell = (text: string, how: number): string =>
      [
        text,
        quote(text),
        `"${text}"`,
        `\\${text}`,
        `$'${text}'`,
        `${text.slice(0, 1)}''${text.slice(1)}`,
        `$'${[...text].map((c) => `\\x${c.charCodeAt(0).toString(16)}`).join("")}'`
      ][how] ?? text
    fc.assert(
      fc.property(word, word, fc.nat(6), fc.nat(6), (name, b, i, j) => {
        // A prefix keeps the command word clear of keywords (`fi`) and wrappers (`env`), which mean other things.
        const a = `my${name}`
        const [command] = analyzeWith(parser, `${spell(a, i)} ${spell(b, j)}`).commands
        assert.deepStrictEqual(command?.argv, [a, b])
      }),
      { numRuns: RUNS }
    )
  })
})
