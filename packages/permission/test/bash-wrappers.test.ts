import { assert, describe, it } from "@effect/vitest"
import { analyzeWith, loadBashParser } from "../src/bash.js"
import { type Decision, decide, project, rules } from "./decide.js"

// Wrappers are looked through with each one's own option grammar, recursively; an option a wrapper's grammar does
// not know makes the line unknown (it could take the next word, and the command would start elsewhere).
const parser = await loadBashParser()
const context = project()
const ruleset = rules({ "*": "allow", bash: { "*": "allow", "rm *": "deny", "git push *": "deny" } })

const through: ReadonlyArray<string> = [
  "setpriv --reuid=1000 --regid 1000 --clear-groups",
  "setpriv --no-new-privs",
  "prlimit --nofile=1024",
  "prlimit -n1024 --as=100000",
  "fakeroot",
  "fakeroot -u --",
  "strace -f -e trace=file -o log",
  "strace -s 200",
  "ltrace -o log",
  "runuser -u nobody --",
  "su -c 'rm x' nobody #",
  "bwrap --bind / / --dev /dev --unshare-pid",
  "bwrap --ro-bind /usr /usr --tmpfs /tmp --chdir /",
  "unshare -r -n",
  "unshare --mount --map-root-user",
  "nsenter -t 1 -m -u",
  "systemd-run --user --wait -p Nice=5",
  "flock /tmp/l",
  "flock -w 5 /tmp/l",
  "chrt -f 10",
  "chrt --rr 10",
  "taskset 0x1",
  "taskset -c 0,1",
  "numactl --interleave=all",
  "numactl -N 0 -m 0",
  "firejail --noprofile --private",
  "env -S'rm x' #",
  "env --split-string='rm x' #",
  "sudo -u root env X=1 timeout -k 1 5 nice -n 3 ionice -c 3 stdbuf -oL",
  "valgrind --tool=memcheck -q",
  "sg users",
  "faketime '2020-01-01'",
  "xvfb-run -a",
  "ssh-agent",
  "dbus-run-session --",
  "setarch x86_64 -R",
  "eatmydata",
  "uv run",
  "poetry run",
  "bundle exec",
  "conda run -n base",
  "npx --yes",
  "pkexec --user root",
  "torsocks",
  "watch -n 1 -x",
  "busybox",
  "xargs -0 -n1"
]

describe("wrappers are looked through", () => {
  for (const wrapper of through) {
    it(wrapper, () => {
      const line = wrapper.endsWith("#") ? wrapper.slice(0, -1) : `${wrapper} rm x`
      assert.strictEqual(decide(parser, context, ruleset, line), "deny", line)
      const push = wrapper.endsWith("#") ? line.replace("rm x", "git push o") : `${wrapper} git push o`
      assert.strictEqual(decide(parser, context, ruleset, push), "deny", push)
    })
  }

  it("nested wrappers, each with its options, are looked through to the command", () => {
    const line = "sudo -E setpriv --nnp prlimit --nofile=9 fakeroot strace -f bwrap --bind / / env -i rm -rf x"
    const [command] = analyzeWith(parser, line).commands
    assert.deepStrictEqual(command?.argv, ["rm", "-rf", "x"])
  })

  it("the wrapped command is what rules see", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["setpriv --reuid 1 ls -la", ["ls", "-la"]],
      ["bwrap --bind a b --setenv K V ls", ["ls"]],
      ["prlimit --pid 1", ["prlimit", "--pid", "1"]],
      ["taskset -p 1", ["taskset", "-p", "1"]],
      ["command -v rm", ["command", "-v", "rm"]],
      ["timeout 5s make test", ["make", "test"]]
    ]
    for (const [line, argv] of cases) assert.deepStrictEqual(analyzeWith(parser, line).commands[0]?.argv, argv, line)
  })

  const unknown: ReadonlyArray<readonly [string, Decision]> = [
    ["strace -Q x rm y", "person"],
    ["setpriv --frobnicate x rm y", "person"],
    ["sudo --unknown-option x ls", "person"],
    ["uv run --with x ls", "person"],
    ["su nobody -- -c 'rm x'", "person"],
    ['env -S "$CMD"', "person"],
    ["bwrap --bind / / $CMD", "person"],
    ['su -c "$X"', "person"],
    ["timeout 5 ls", "allow"],
    ["setpriv --nnp ls", "allow"],
    ["strace -f ls", "allow"]
  ]
  for (const [line, expected] of unknown) {
    it(`${expected}: ${line}`, () => assert.strictEqual(decide(parser, context, ruleset, line), expected))
  }
})
