import { assert, describe, it } from "@effect/vitest"
import { analyzeCommand } from "../src/bash.js"

interface Case {
  readonly line: string
  /** The `text` of every simple command, in the order found. */
  readonly commands: ReadonlyArray<string>
  readonly unparsable?: boolean
  readonly writes?: ReadonlyArray<string>
  /** The targets of `unknownWrites`. */
  readonly unknownWrites?: ReadonlyArray<string>
}

const cases: ReadonlyArray<Case> = [
  { line: "ls", commands: ["ls"] },
  { line: "ls -la src", commands: ["ls -la src"] },
  { line: "ls && rm -rf x", commands: ["ls", "rm -rf x"], writes: ["x"] },
  { line: "ls || rm -rf x", commands: ["ls", "rm -rf x"], writes: ["x"] },
  { line: "ls; rm x", commands: ["ls", "rm x"], writes: ["x"] },
  { line: "ls\nrm x", commands: ["ls", "rm x"], writes: ["x"] },
  { line: "cat a | grep b | wc -l", commands: ["cat a", "grep b", "wc -l"] },
  { line: "echo $(rm -rf x)", commands: ["rm -rf x", "echo $(rm -rf x)"], writes: ["x"] },
  { line: "echo `rm -rf x`", commands: ["rm -rf x", "echo `rm -rf x`"], writes: ["x"] },
  { line: 'echo "$(rm -rf x)"', commands: ["rm -rf x", 'echo "$(rm -rf x)"'], writes: ["x"] },
  { line: "(cd sub && rm x)", commands: ["cd sub", "rm x"], writes: ["sub/x"] },
  { line: "{ ls; rm y; }", commands: ["ls", "rm y"], writes: ["y"] },
  { line: 'bash -c "rm -rf x"', commands: ["rm -rf x"], writes: ["x"] },
  { line: "sh -c 'ls | rm y'", commands: ["ls", "rm y"], writes: ["y"] },
  { line: "bash -lc 'git push origin main'", commands: ["git push origin main"] },
  { line: 'bash -c "bash -c \\"rm z\\""', commands: ["rm z"], writes: ["z"] },
  { line: "eval 'rm -rf x'", commands: ["rm -rf x"], writes: ["x"] },
  { line: "find . -exec rm {} \\;", commands: ["rm '{}'", "find . -exec rm '{}' ';'"], writes: ["."] },
  {
    line: "find /tmp -name '*.log' -execdir rm -f {} +",
    commands: ["rm -f '{}'", "find /tmp -name '*.log' -execdir rm -f '{}' +"],
    writes: ["/tmp"]
  },
  { line: "ls | xargs rm", commands: ["ls", "rm"], unknownWrites: ["rm"] },
  { line: "ls | xargs -I{} mv {} old/", commands: ["ls", "mv {} old/"], writes: ["old/"], unknownWrites: ["{}"] },
  { line: "FOO=1 rm x", commands: ["rm x"], writes: ["x"] },
  { line: "CI=true git push origin main", commands: ["git push origin main"] },
  { line: "env X=1 Y=2 rm x", commands: ["rm x"], writes: ["x"] },
  { line: "env -i PATH=/bin make", commands: ["make"] },
  { line: "sudo rm -rf /", commands: ["rm -rf /"], writes: ["/"] },
  { line: "sudo -u root -- rm a", commands: ["rm a"], writes: ["a"] },
  { line: "timeout 5 npm test", commands: ["npm test"] },
  { line: "timeout -s KILL 10s nice -n 5 make build", commands: ["make build"] },
  { line: "command rm x", commands: ["rm x"], writes: ["x"] },
  { line: "command -v rm", commands: ["command -v rm"] },
  { line: "exec rm x", commands: ["rm x"], writes: ["x"] },
  { line: "nohup ./server &", commands: ["server"] },
  { line: "\\rm x", commands: ["rm x"], writes: ["x"] },
  { line: 'r""m x', commands: ["rm x"], writes: ["x"] },
  { line: "echo 'a b' \"c d\" e\\ f", commands: ["echo 'a b' 'c d' 'e f'"] },
  { line: "git commit -m 'fix: it'\"'\"'s done'", commands: ["git commit -m 'fix: it'\\''s done'"] },
  { line: "echo $HOME $" + "{PATH}", commands: ["echo $HOME $" + "{PATH}"] },
  { line: "echo hi > out.txt", commands: ["echo hi"], writes: ["out.txt"] },
  { line: "echo hi >> /etc/hosts 2>&1", commands: ["echo hi"], writes: ["/etc/hosts"] },
  { line: "ls > /dev/null 2>&1", commands: ["ls"] },
  { line: "cmd &> log.txt", commands: ["cmd"], writes: ["log.txt"] },
  { line: "cd /tmp && touch a", commands: ["cd /tmp", "touch a"], writes: ["/tmp/a"] },
  { line: "cp src/a.ts ~/backup/", commands: ["cp src/a.ts ~/backup/"], writes: ["~/backup/"] },
  { line: "tee -a ../log < input", commands: ["tee -a ../log"], writes: ["../log"] },
  { line: "if true; then rm a; fi", commands: ["true", "rm a"], writes: ["a"] },
  { line: "for f in *.txt; do rm $f; done", commands: ["rm $f"], unknownWrites: ["$f"] },
  { line: "f() { rm b; }; f", commands: ["rm b", "f"], writes: ["b"] },
  { line: "export X=$(whoami)", commands: ["whoami"] },
  { line: "diff <(ls a) <(ls b)", commands: ["ls a", "ls b", "diff <(ls a) <(ls b)"] },
  { line: "cat <<EOF\n$(rm q)\nEOF", commands: ["rm q", "cat"], writes: ["q"] },
  { line: "# just a comment", commands: [] },
  { line: 'echo "unterminated', commands: ["echo"], unparsable: true },
  { line: "ls |", commands: ["ls"], unparsable: true },
  { line: "$CMD x", commands: [], unparsable: true },
  { line: '"$(which rm)" y', commands: ["which rm"], unparsable: true },
  { line: 'bash -c "$SCRIPT"', commands: [], unparsable: true },
  { line: "eval $X", commands: [], unparsable: true },
  { line: "env -S 'rm -rf x'", commands: ["rm -rf x"], writes: ["x"] },
  { line: "echo hi > $OUT", commands: ["echo hi"], unknownWrites: ["$OUT"] },
  { line: "cd $DIR && rm x", commands: ["cd $DIR", "rm x"], unknownWrites: ["x"] }
]

describe("analyzeCommand", () => {
  it("covers at least 40 command lines", () => {
    assert.isAtLeast(cases.length, 40)
  })

  for (const { line, commands, unparsable = false, writes, unknownWrites = [] } of cases) {
    it(JSON.stringify(line), async () => {
      const analysis = await analyzeCommand(line)
      assert.deepStrictEqual(
        analysis.commands.map((command) => command.text),
        commands
      )
      assert.strictEqual(analysis.unparsable !== undefined, unparsable, analysis.unparsable)
      if (writes) assert.deepStrictEqual(analysis.writes, writes)
      assert.deepStrictEqual(
        analysis.unknownWrites.map((write) => write.target),
        unknownWrites
      )
    })
  }

  it("normalises argv and offers per-command always patterns", async () => {
    const analysis = await analyzeCommand("CI=true git push origin main && sudo ls -la | npm run build")
    assert.deepStrictEqual(
      analysis.commands.map((command) => [command.argv, command.always]),
      [
        [["git", "push", "origin", "main"], "git push *"],
        [["ls", "-la"], "ls *"],
        [["npm", "run", "build"], "npm run *"]
      ]
    )
  })

  it("says why a line is unparsable", async () => {
    assert.match((await analyzeCommand("$CMD x")).unparsable ?? "", /command name is computed at run time/)
    assert.match((await analyzeCommand("echo 'x")).unparsable ?? "", /syntax error/)
  })
})
