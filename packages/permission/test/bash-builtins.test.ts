import { assert, describe, it } from "@effect/vitest"
import { loadBashParser } from "../src/bash.js"
import { type Decision, decide, project, rules } from "./decide.js"

// Bash builtins and expansions that evaluate text or rebind names make the line unknown under deny rules.
const parser = await loadBashParser()
const context = project()
const ruleset = rules({ "*": "allow", bash: { "*": "allow", "rm *": "deny", "git push *": "deny" } })

const table: ReadonlyArray<readonly [string, Decision]> = [
  ["hash -p /bin/rm ls; ls x", "person"],
  ["hash -rp /bin/rm ls", "person"],
  ["BASH_CMDS[ls]=/bin/rm; ls x", "person"],
  ["BASH_CMDS+=([ls]=/bin/rm)", "person"],
  ["declare -A BASH_ALIASES=([ls]=rm)", "person"],
  ["BASH_ALIASES[ls]='rm -rf'", "person"],
  ["mapfile -C 'rm x' -c 1 a < a.txt", "person"],
  ["readarray -C cb a < a.txt", "person"],
  ["compgen -C 'rm x' w", "person"],
  ["complete -C 'rm x' ls", "person"],
  ["enable -f ./evil.so evil", "person"],
  ["fc -s", "person"],
  ["(( a[$i] ))", "person"],
  ["(( a[$(rm x)] ))", "deny"],
  ["echo $(( a[$i] + 1 ))", "person"],
  ["for (( j = 0; j < a[$i]; j++ )); do :; done", "person"],
  ["[[ -v a[$i] ]]", "person"],
  ["test -v 'a[$(rm x)]'", "person"],
  ["[ -v 'a[$(rm x)]' ]", "person"],
  ["declare 'a[$(rm x)]'", "person"],
  ["local 'a[$(rm x)]=1'", "person"],
  ["typeset -a 'a[$(rm x)]'", "person"],
  ["unset 'a[$(rm x)]'", "person"],
  ["printf -v 'a[$(rm x)]' %s 1", "person"],
  ["read 'a[$(rm x)]' < a.txt", "person"],
  ["let 'a[$(rm x)]=1'", "person"],
  ["x='a[$(rm y)]'; (( x ))", "person"],
  ["x='$(rm y)'; [[ -v a[$x] ]]", "person"],
  ["read -r x <<< 'a[$(rm y)]'; echo $(( x ))", "person"],
  ["echo $" + "{x@P}", "person"],
  ['echo "$' + '{PS1@P}"', "person"],
  // Ordinary builtins stay allowed.
  ["hash -r", "allow"],
  ["hash", "allow"],
  ["(( i = 1 + 2 ))", "allow"],
  ["echo $(( a[1] + 2 ))", "allow"],
  ["declare -a a=(1 2); a[0]=3", "allow"],
  ["[[ -v HOME ]]", "allow"],
  ["test -v a", "allow"],
  ["mapfile -t lines < a.txt", "allow"],
  ["compgen -c", "allow"],
  ["echo $" + "{x@Q}", "allow"],
  ["read -r name <<< 'world'", "allow"]
]

describe("builtins that evaluate or rebind names", () => {
  for (const [line, expected] of table) {
    it(`${expected}: ${JSON.stringify(line)}`, () => {
      assert.strictEqual(decide(parser, context, ruleset, line), expected)
    })
  }

  it("follow the * rule without deny rules", () => {
    for (const [line] of table) {
      if (!line.includes("rm x)]"))
        assert.strictEqual(decide(parser, context, rules({ "*": "allow" }), line), "allow", line)
    }
  })
})
