import { assert, describe, it } from "@effect/vitest"
import { loadBashParser } from "../src/bash.js"
import { CODE_RUNNERS, codeVariable, DATA_STDIN } from "../src/code-runners.js"
import { type Decision, decide, project, rules } from "./decide.js"

// One test per row of the code-runner table: each form that runs text as code is unknown under deny rules
// ("person": only a person may approve it) unless its code is a static shell string, which is analysed ("deny"
// when it holds `rm`); the program's ordinary uses stay allowed.
const parser = await loadBashParser()
const context = project()
const ruleset = rules({ "*": "allow", bash: { "*": "allow", "rm *": "deny", "git push *": "deny" } })

type Forms = ReadonlyArray<readonly [string, Decision]>
const interpreter = (name: string, inline: string): Forms => [
  [`${name} ${inline} 'x'`, "person"],
  [`${name} /dev/stdin <<< 'x'`, "person"],
  [`${name} /proc/self/fd/0 < a.txt`, "person"],
  [`${name} - <<'EOF'\nx\nEOF`, "person"],
  [`echo x | ${name}`, "person"],
  [`${name} script.x`, "allow"]
]
const shell = (name: string): Forms => [
  [`${name} -c 'rm x'`, "deny"],
  [`${name} -c "$S"`, "person"],
  [`${name} <<< 'rm x'`, "deny"],
  [`${name} -c 'ls'`, "allow"]
]
const vim = (name: string): Forms => [
  [`${name} -c '!rm x' f`, "person"],
  [`${name} +'!rm x' f`, "person"],
  [`${name} -S /dev/stdin f <<< x`, "person"],
  [`${name} -es f < a.txt`, "person"],
  [`${name} --version`, "allow"]
]
const awk = (name: string): Forms => [
  [`${name} 'BEGIN{system("rm x")}'`, "person"],
  [`${name} -f /dev/stdin a.txt`, "person"],
  [`${name} '{print $1}' a.txt`, "allow"]
]

const FORMS: Readonly<Record<string, Forms>> = {
  ...Object.fromEntries(
    ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "posh", "tcsh", "csh", "rbash", "ksh93"].map(
      (name) => [name, shell(name)]
    )
  ),
  eval: [
    ["eval 'rm x'", "deny"],
    ["eval $X", "person"]
  ],
  source: [["source ./x.sh", "person"]],
  ".": [[". ./x.sh", "person"]],
  trap: [
    ["trap 'rm x' EXIT", "deny"],
    ['trap "$X" EXIT', "person"]
  ],
  alias: [
    ["alias l='rm x'", "deny"],
    ['alias l="$X"', "person"]
  ],
  hash: [
    ["hash -p /bin/rm ls; ls x", "person"],
    ["hash -r", "allow"]
  ],
  mapfile: [
    ["mapfile -C 'rm x' -c 1 a < a.txt", "person"],
    ["mapfile a < a.txt", "allow"]
  ],
  readarray: [["readarray -t -C cb a < a.txt", "person"]],
  compgen: [
    ["compgen -C 'rm x' w", "person"],
    ["compgen -F f w", "person"],
    ["compgen -c", "allow"]
  ],
  complete: [["complete -C 'rm x' git", "person"]],
  enable: [["enable -f ./x.so x", "person"]],
  fc: [["fc -s ls", "person"]],
  test: [
    ["test -v 'a[$(rm x)]'", "person"],
    ["test -v a", "allow"]
  ],
  "[": [["[ -v 'a[$(rm x)]' ]", "person"]],
  let: [["let 'a[$(rm x)]=1'", "person"]],
  printf: [
    ["printf -v 'a[$(rm x)]' %s y", "person"],
    ["printf '%s\\n' x", "allow"]
  ],
  read: [
    ["read -r x <<< 'a[$(rm y)]'; (( x ))", "person"],
    ["read -r x <<< 'hello'", "allow"]
  ],
  python: interpreter("python", "-W ignore -c"),
  pypy: interpreter("pypy3", "-c"),
  node: [
    ...interpreter("node", "--eval"),
    ["node --import 'data:text/javascript,x' a.js", "person"],
    ["node -r /dev/stdin a.js", "person"],
    ["node --print 1", "person"],
    ["node --version", "allow"]
  ],
  nodejs: interpreter("nodejs", "-e"),
  bun: [
    ["bun -e 'x'", "person"],
    ["bun --print 1", "person"]
  ],
  deno: [
    ["deno eval 'x'", "person"],
    ["deno run - < a.txt", "person"],
    ["deno run main.ts", "allow"]
  ],
  perl: [
    ...interpreter("perl", "-e"),
    ["perl -pe 's/a/b/' a.txt", "person"],
    ["perl -M'strict;system q(rm x)' -le 1", "person"],
    ["perl -MData::Dumper script.pl", "allow"]
  ],
  ruby: interpreter("ruby", "-e"),
  irb: [["irb <<< 'x'", "person"]],
  php: [
    ...interpreter("php", "-r"),
    ["php -d auto_prepend_file=/dev/stdin s.php <<< x", "person"],
    ["php -B 'x' -R 'y'", "person"]
  ],
  ...Object.fromEntries(
    ["lua", "luajit", "lua5.1", "lua5.2", "lua5.3", "lua5.4", "texlua"].map((name) => [name, interpreter(name, "-e")])
  ),
  tclsh: [
    ["tclsh <<< 'exec rm x'", "person"],
    ["tclsh /dev/stdin < a.txt", "person"],
    ["tclsh build.tcl", "allow"]
  ],
  wish: [["wish <<< 'exec rm x'", "person"]],
  jimsh: [["jimsh <<< 'exec rm x'", "person"]],
  expect: [
    ["expect -c 'spawn rm x'", "person"],
    ["expect <<< 'spawn rm x'", "person"]
  ],
  Rscript: interpreter("Rscript", "-e"),
  R: [
    ["R -e 'system(1)'", "person"],
    ["R --no-save < a.txt", "person"]
  ],
  julia: interpreter("julia", "-e"),
  osascript: [["osascript -e 'x'", "person"]],
  ...Object.fromEntries(["awk", "gawk", "mawk", "nawk", "busybox-awk"].map((name) => [name, awk(name)])),
  dc: [
    ["dc -e '!rm x'", "person"],
    ["dc <<< '!rm x'", "person"]
  ],
  ed: [["ed f <<< '!rm x'", "person"]],
  red: [["red f <<< '!rm x'", "person"]],
  sqlite3: [
    ["sqlite3 db '.shell rm x'", "person"],
    ["sqlite3 -cmd '.system rm x' db", "person"],
    ["sqlite3 db < a.txt", "person"]
  ],
  sqlite: [["sqlite db '.shell rm x'", "person"]],
  psql: [
    ["psql -c '\\! rm x'", "person"],
    ["psql <<< '\\! rm x'", "person"]
  ],
  mysql: [["mysql -e 'system rm x'", "person"]],
  emacs: [
    ["emacs --batch --eval '(shell-command \"rm x\")'", "person"],
    ["emacs -l /dev/stdin", "person"]
  ],
  emacsclient: [["emacsclient --eval '(x)'", "person"]],
  ...Object.fromEntries(
    ["vim", "vi", "nvim", "ex", "view", "gvim", "rvim", "vimdiff", "gview"].map((name) => [name, vim(name)])
  ),
  sed: [
    ["sed '1e rm x' a.txt", "deny"],
    ["sed -n -e 'p;e rm x' a.txt", "deny"],
    ["sed 's/a/b/e' a.txt", "person"],
    ["sed '1e' a.txt", "person"],
    ["sed -f /dev/stdin a.txt <<< x", "person"],
    ["sed --expr='1e rm x' a.txt", "deny"],
    ["sed -i 's/a/b/g; /x/d' a.txt", "allow"],
    ["sed -n '/^e/p' a.txt", "allow"],
    ["sed --sandbox 's/a/b/e' a.txt", "allow"]
  ],
  find: [
    ["find . -exec rm {} \\;", "deny"],
    ["find . -name x", "allow"]
  ],
  parallel: [
    ["parallel rm ::: a", "deny"],
    ["ls | parallel", "person"]
  ],
  sem: [["sem rm ::: a", "deny"]],
  rsync: [
    ["rsync -e 'rm x' a b:c", "deny"],
    ["rsync --rsync-path='rm x' a b:c", "deny"],
    ["rsync -av a sub/", "allow"]
  ],
  ssh: [
    ["ssh -o ProxyCommand='rm x' h", "deny"],
    ["ssh -oLocalCommand='rm x' -o PermitLocalCommand=yes h", "deny"],
    ["ssh -o 'KnownHostsCommand rm x' h", "deny"],
    ["ssh -F /dev/stdin h < a.txt", "person"],
    ['ssh -o ProxyCommand="$P" h', "person"]
  ],
  scp: [
    ["scp -S 'rm x' a h:b", "deny"],
    ["scp -o ProxyCommand='rm x' a h:b", "deny"]
  ],
  sftp: [["sftp -S 'rm x' h", "deny"]],
  autossh: [["autossh -o ProxyCommand='rm x' h", "deny"]],
  tar: [
    ["tar --to-command='rm x' -xf a.tar", "deny"],
    ["tar --to-com 'rm x' -xf a.tar", "deny"],
    ["tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='rm x' a.txt", "deny"],
    ["tar -I 'rm x' -cf a.tar a.txt", "deny"],
    ["tar cIf 'rm x' a.tar a.txt", "person"],
    ["tar -xzf a.tar", "allow"],
    ["tar xzf a.tar", "allow"]
  ],
  zip: [
    ["zip -T -TT 'rm x' a.zip a.txt", "deny"],
    ["zip --unzip-command='rm x' -T a.zip a.txt", "deny"],
    ["zip -r a.zip sub", "allow"]
  ],
  make: [
    ["make -f /dev/stdin <<< x", "person"],
    ["make --eval='x:;rm y' x", "person"],
    ["make -E 'x'", "person"],
    ["make -j4 test", "allow"]
  ],
  gmake: [["gmake --ev='x'", "person"]],
  remake: [["remake -f - < a.txt", "person"]],
  npm: [
    ["npm exec -c 'rm x'", "deny"],
    ["npm exec -- rm x", "deny"],
    ["npm x rm x", "deny"],
    ["npm run build --script-shell=./x", "person"],
    ["npm test", "allow"]
  ],
  pnpm: [
    ["pnpm exec rm x", "deny"],
    ["pnpm dlx rm x", "deny"]
  ],
  yarn: [["yarn exec rm x", "deny"]],
  script: [
    ["script -q -c 'rm x' /dev/null", "deny"],
    ["script --command='rm x' /dev/null", "deny"],
    ["echo 'rm x' | script -q /dev/null", "person"]
  ],
  gdb: [
    ["gdb -batch -ex 'shell rm x'", "person"],
    ["gdb --eval-command='shell rm x' p", "person"],
    ["gdb -x /dev/stdin p < a.txt", "person"],
    ["gdb --version", "allow"]
  ],
  man: [
    ["man -P 'rm x' ls", "deny"],
    ["man --pager='rm x' ls", "deny"],
    ["man ls", "allow"]
  ],
  nc: [["nc -e 'rm x' h 1", "deny"]],
  ncat: [["ncat --sh-exec 'rm x' h 1", "deny"]],
  netcat: [["netcat -c 'rm x' h 1", "deny"]],
  socat: [
    ["socat - EXEC:'rm x'", "deny"],
    ["socat - SYSTEM:'rm x'", "deny"],
    ["socat - TCP:h:1", "allow"]
  ],
  tmux: [
    ["tmux new-session -d 'rm x'", "person"],
    ["tmux -c 'rm x'", "deny"],
    ["tmux ls", "allow"]
  ],
  screen: [["screen -dm rm x", "person"]],
  at: [
    ["at now <<< 'rm x'", "person"],
    ["at -f /dev/stdin now < a.txt", "person"]
  ],
  batch: [["batch <<< 'rm x'", "person"]],
  crontab: [["crontab - <<< '* * * * * rm x'", "person"]],
  go: [
    ["go run -exec 'rm x' .", "deny"],
    ["go build -toolexec='rm x' .", "deny"],
    ["go test ./...", "allow"]
  ],
  git: [
    ["git -c core.pager='rm x' log", "person"],
    ["git rebase --exec 'rm x' main", "deny"],
    ["git status", "allow"]
  ]
}

describe("code-runner table: one test per row", () => {
  it("every row of the table has forms tested here", () => {
    const missing = [...CODE_RUNNERS.keys()].filter((name) => !(name in FORMS))
    assert.deepStrictEqual(missing, [])
  })

  for (const [name, forms] of Object.entries(FORMS)) {
    it(name, () => {
      const got = forms.map(([line]): readonly [string, Decision] => [line, decide(parser, context, ruleset, line)])
      assert.deepStrictEqual(got, [...forms])
    })
  }

  it("versioned interpreter names use their row", () => {
    for (const name of ["python3", "python3.12", "perl5.36", "ruby3.2", "php8.2"]) {
      assert.strictEqual(decide(parser, context, ruleset, `${name} /dev/stdin <<< x`), "person", name)
    }
  })

  it("without deny rules every form follows the * rule", () => {
    const allowAll = rules({ "*": "allow" })
    for (const forms of Object.values(FORMS)) {
      for (const [line] of forms) {
        if (!/\brm\b/.test(line)) assert.strictEqual(decide(parser, context, allowAll, line), "allow", line)
      }
    }
  })
})

describe("here-documents and here-strings", () => {
  it("are data for every program listed as reading data only", () => {
    for (const name of DATA_STDIN) {
      const line = `${name === ":" ? ":" : name} <<'EOF'\nrm x\nEOF`
      assert.strictEqual(decide(parser, context, ruleset, line), "allow", line)
    }
  })

  it("a body line starting with a backslash, which the parser misreads, is unknown (found by the slow fuzz run)", () => {
    assert.strictEqual(decide(parser, context, ruleset, "bash <<'EOF'\n\\rm -rf victim\nEOF"), "person")
  })

  it("make any other program unknown", () => {
    for (const line of ["mytool <<< 'rm x'", "python3 s.py <<'EOF'\nx\nEOF", "patch2 -p1 <<< x", "./run <<< x"]) {
      assert.strictEqual(decide(parser, context, ruleset, line), "person", line)
    }
  })
})

describe("environment variables that name code", () => {
  const names = [
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS4",
    "LD_PRELOAD",
    "LD_AUDIT",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "LESSCLOSE",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SSH_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_KEY_0",
    "GIT_CONFIG_VALUE_3",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_GLOBAL",
    "NODE_OPTIONS",
    "PERL5OPT",
    "RUBYOPT",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
    "MAKEFLAGS",
    "BASH_CMDS",
    "BASH_ALIASES",
    "npm_config_script_shell"
  ]

  for (const name of names) {
    it(name, () => {
      assert.isDefined(codeVariable(name))
      for (const line of [`${name}=x ls`, `export ${name}=x; ls`, `env ${name}=x ls`]) {
        assert.strictEqual(decide(parser, context, ruleset, line), "person", line)
      }
    })
  }

  it("ordinary variables stay allowed", () => {
    for (const line of ["CI=true npm test", "NODE_ENV=production node a.js", "IFS=, read -r a b <<< 'x,y'"]) {
      assert.strictEqual(decide(parser, context, ruleset, line), "allow", line)
    }
  })
})
