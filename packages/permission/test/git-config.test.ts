import { assert, describe, it } from "@effect/vitest"
import { loadBashParser } from "../src/bash.js"
import { type Decision, decide, project, rules } from "./decide.js"

// git as a code runner: configuration from the environment or from -c for a key that runs a program is unknown;
// subcommand options and subcommands that run programs are analysed; git push is recognised under other names.
const parser = await loadBashParser()
const context = project()
const ruleset = rules({ "*": "allow", bash: { "*": "allow", "rm *": "deny", "git push *": "deny" } })

const table: ReadonlyArray<readonly [string, Decision]> = [
  // Configuration from the environment.
  ["GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0=push git st", "person"],
  ["export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm x'; git log", "person"],
  ["GIT_CONFIG_PARAMETERS=\"'alias.st'='push'\" git st", "person"],
  ["env GIT_CONFIG_GLOBAL=/tmp/evil git log", "person"],
  ["GIT_EXEC_PATH=/tmp/evil git status", "person"],
  ["git --exec-path=/tmp/evil status", "person"],
  // -c and --config-env for keys that run programs.
  ["git -c remote.origin.uploadpack='rm x' fetch origin", "person"],
  ["git -c protocol.ext.allow=always fetch 'ext::sh -c rm% x'", "person"],
  ["git -c core.sshCommand='rm x' fetch", "person"],
  ["git -c core.fsmonitor='rm x' status", "person"],
  ["git -c core.hooksPath=/tmp/h commit -m x", "person"],
  ["git -c include.path=/tmp/evil status", "person"],
  ["git -c credential.helper='!rm x' fetch", "person"],
  ["git -c diff.x.textconv='rm x' diff", "person"],
  ["git --config-env=core.pager=P log", "person"],
  ["git -c alias.x=push x", "person"],
  ["git -c user.name=x -c color.ui=false status", "allow"],
  // Subcommand options and subcommands that run programs are analysed.
  ["git fetch --upload-pack='rm x' origin", "deny"],
  ["git pull --upload-pack 'rm x'", "deny"],
  ["git clone -u 'rm x' a b", "deny"],
  ["git clone --template=/tmp/t a b", "person"],
  ["git ls-remote --upload-pack='rm x' o", "deny"],
  ["git archive --remote=o --exec='rm x' HEAD", "deny"],
  ["git rebase --exec 'rm x' main", "deny"],
  ["git rebase -x 'rm x' main", "deny"],
  ['git rebase -i --exec="$CMD" main', "person"],
  ["git submodule foreach 'rm x'", "deny"],
  ["git submodule foreach --recursive 'git push'", "deny"],
  ["git bisect run rm x", "deny"],
  ["git bisect run make test", "allow"],
  ["git difftool -x 'rm x'", "deny"],
  ["git difftool --extcmd='rm x'", "deny"],
  ["git filter-branch --tree-filter 'rm x' HEAD", "deny"],
  ["git filter-branch --index-filter 'git rm --cached x' HEAD", "allow"],
  ["git grep -O'rm x' foo", "deny"],
  ["git push --receive-pack='rm x' o", "deny"],
  ["git remote-ext o 'ext::rm x'", "person"],
  // git push under other names.
  ["git send-pack o main", "deny"],
  ["git http-push o main", "deny"],
  ["/usr/lib/git-core/git-push o main", "deny"],
  ["git-push o main", "deny"],
  ["git subtree push --prefix d o main", "deny"],
  // Aliases: persisted, or any subcommand git does not have.
  ["git config alias.p push", "person"],
  ["git config --global alias.p push", "person"],
  ["git config set alias.p push", "person"],
  ["git config core.pager 'rm x'", "person"],
  ["git config --get alias.p", "allow"],
  ["git config user.name x", "allow"],
  ["git p origin main", "person"],
  ["git pushx", "person"],
  ["git status", "allow"],
  ["git stash push -m x", "allow"],
  ["git commit -m x", "allow"],
  ["git log --oneline", "allow"]
]

describe("git configuration, subcommands and aliases", () => {
  for (const [line, expected] of table) {
    it(`${expected}: ${JSON.stringify(line)}`, () => {
      assert.strictEqual(decide(parser, context, ruleset, line), expected)
    })
  }
})
