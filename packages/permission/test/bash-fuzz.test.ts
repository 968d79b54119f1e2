import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { loadBashParser } from "../src/bash.js"
import { decide, rules } from "./decide.js"
import { tempRoot } from "./helpers.js"

// The fuzzing property: compose wrappers, code runners, redirections and quoting around `rm -rf victim` and
// `git push`, run every composed line under plain bash in a scratch project to see whether it really deletes the
// victim or moves a ref of a real bare remote, and assert that each line that does is refused by the analyser
// under `rm *` / `git push *` deny rules (a deny, or an ask only a person may approve). Seeded and deterministic:
// LATHE_FUZZ_CASES (default 300) and LATHE_FUZZ_SEED pick the lines; a slow run uses LATHE_FUZZ_CASES=5000.
const CASES = Number(process.env.LATHE_FUZZ_CASES ?? 300)
const SEED = Number(process.env.LATHE_FUZZ_SEED ?? 37)

const parser = await loadBashParser()
const ruleset = rules({ "*": "allow", bash: { "*": "allow", "rm *": "deny", "git push *": "deny" } })

const installed = (name: string): boolean => spawnSync("bash", ["-c", `command -v ${name}`]).status === 0
const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

/** A deterministic generator (mulberry32). */
const random = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const PUSH = "../remote.git HEAD:refs/heads/fuzz"

/** Simple commands that delete `victim` or push, which a wrapper can run; `needs` names the programs required. */
const commands: ReadonlyArray<readonly [string, ReadonlyArray<string>?]> = [
  ["rm -rf victim"],
  ["\\rm -rf victim"],
  ["'rm' -r -f -- victim"],
  ["/bin/rm -rf victim"],
  ["r''m -rf victim"],
  ["bash -c 'rm -rf victim'"],
  ['sh -c "rm -rf victim"'],
  ["bash -s <<< 'rm -rf victim'"],
  ["python3 -c 'import shutil; shutil.rmtree(\"victim\")'", ["python3"]],
  ["python3 -W ignore -c 'import shutil; shutil.rmtree(\"victim\")'", ["python3"]],
  ["python3 /dev/stdin <<< 'import shutil; shutil.rmtree(\"victim\")'", ["python3"]],
  ["python3 - <<< 'import os; os.system(\"rm -rf victim\")'", ["python3"]],
  ["perl -e 'system(\"rm -rf victim\")'", ["perl"]],
  ["perl /proc/self/fd/0 <<< 'system(\"rm -rf victim\")'", ["perl"]],
  ["perl -MFile::Path=remove_tree -e 'remove_tree(\"victim\")'", ["perl"]],
  ['node -e \'require("fs").rmSync("victim",{recursive:true})\'', ["node"]],
  [
    'node --import \'data:text/javascript,import fs from "fs"; fs.rmSync("victim",{recursive:true})\' /dev/null',
    ["node"]
  ],
  ["tclsh <<< 'exec rm -rf victim'", ["tclsh"]],
  ["sed -n '1e rm -rf victim' a.txt"],
  ["sed 's/.*/rm -rf victim/e' a.txt"],
  ["tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='rm -rf victim' a.txt"],
  ["tar --to-command='rm -rf victim' -xf a.tar"],
  ["zip -q z.zip a.txt -T -TT 'rm -rf victim'", ["zip"]],
  ["make -s -f /dev/stdin <<< $'all:\\n\\trm -rf victim'", ["make"]],
  ["make -s --eval=$'zap:\\n\\trm -rf victim' zap", ["make"]],
  ["script -qc 'rm -rf victim' /dev/null", ["script"]],
  ["gdb -batch -ex 'shell rm -rf victim'", ["gdb"]],
  ["vim -es -u NONE -c '!rm -rf victim' -c 'qa!'", ["vim"]],
  ["ed -s a.txt <<< '!rm -rf victim'", ["ed"]],
  ["find victim -maxdepth 0 -exec rm -rf {} \\;"],
  ["find . -maxdepth 1 -name victim -exec rm -rf {} +"],
  ["xargs rm -rf <<< victim"],
  ["env -S'rm -rf victim'"],
  ["flock /tmp/lathe-fuzz.lock -c 'rm -rf victim'", ["flock"]],
  ["su -c 'rm -rf victim'", ["su"]],
  ["runuser -u root -- rm -rf victim", ["runuser"]],
  ["git -c alias.zap='!rm -rf victim' zap"],
  ["GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.zap GIT_CONFIG_VALUE_0='!rm -rf victim' git zap"],
  ["awk 'BEGIN{system(\"rm -rf victim\")}'"],
  ["ssh -o ProxyCommand='rm -rf victim' -o BatchMode=yes lathe-fuzz-host", ["ssh"]],
  [`git push -q ${PUSH}`],
  [`git -C . push -q ${PUSH}`],
  [`git --no-pager push -q ${PUSH}`],
  [`git send-pack ../remote.git HEAD:refs/heads/fuzz`],
  [`/usr/lib/git-core/git-push -q ${PUSH}`],
  [`git -c alias.p=push p -q ${PUSH}`],
  [`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p -q ${PUSH}`],
  [`GIT_CONFIG_PARAMETERS="'alias.p'='push'" git p -q ${PUSH}`],
  [`bash -c 'git push -q ${PUSH}'`],
  [`python3 -c 'import os; os.system("git push -q ${PUSH}")'`, ["python3"]]
]

/** Whole lines (a wrapper cannot run them): builtins that rebind or evaluate names, persisted aliases. */
const lines: ReadonlyArray<string> = [
  "hash -p /bin/rm ls; ls -rf victim",
  "BASH_CMDS[ls]=/bin/rm; ls -rf victim",
  "i='a[$(rm -rf victim)]'; (( i ))",
  "declare -a a; test -v 'a[$(rm -rf victim)]'",
  "x='$(rm -rf victim)'; echo $" + "{x@P}",
  "eval 'rm -rf victim'",
  "trap 'rm -rf victim' EXIT",
  "mapfile -C 'rm -rf victim #' -c 1 a <<< x",
  `git config alias.p push && git p -q ${PUSH}`
]

const wrappers: ReadonlyArray<readonly [string, ReadonlyArray<string>?]> = [
  ["timeout 20"],
  ["nice -n 1"],
  ["env"],
  ["/usr/bin/env -u LATHE_NOTHING"],
  ["setsid -w"],
  ["stdbuf -oL"],
  ["nohup"],
  ["command"],
  ["time -p"],
  ["ionice -c 3"],
  ["setpriv --reuid=0", ["setpriv"]],
  ["prlimit --nofile=1024", ["prlimit"]],
  ["fakeroot", ["fakeroot"]],
  ["strace -f -o /dev/null", ["strace"]],
  ["bwrap --bind / / --dev /dev", ["bwrap"]],
  ["unshare -r", ["unshare"]],
  ["flock /tmp/lathe-fuzz.lock", ["flock"]],
  ["chrt -o 0", ["chrt"]],
  ["taskset -c 0", ["taskset"]],
  ["runuser -u root --", ["runuser"]]
]

type Wrap = (inner: string) => string
const containers: ReadonlyArray<Wrap> = [
  (inner) => `bash -c ${quote(inner)}`,
  (inner) => `sh -c ${quote(inner)}`,
  (inner) => `eval ${quote(inner)}`,
  (inner) => `( ${inner} )`,
  (inner) => `{ ${inner}; }`,
  (inner) => `true && ${inner}`,
  (inner) => `false || ${inner}`,
  (inner) => `${inner}; true`,
  (inner) => `bash <<'LATHE'\n${inner}\nLATHE`
]
const redirects = ["", " 2>/dev/null", " >/dev/null 2>&1", " &>/dev/null"]

const available = <T extends readonly [string, ReadonlyArray<string>?]>(list: ReadonlyArray<T>) =>
  list.filter(([, needs]) => (needs ?? []).every(installed))

/** The scratch project: `work/` (a clone with `victim/` and files) beside a bare `remote.git`. */
const scratch = () => {
  const root = tempRoot()
  const work = join(root, "work")
  const git = (args: ReadonlyArray<string>, cwd = root) =>
    spawnSync("git", args, { cwd, env: gitEnv(root), encoding: "utf8" })
  git(["init", "-q", "--bare", "remote.git"])
  git(["init", "-q", "work"])
  writeFileSync(join(work, "a.txt"), "a\n")
  git(["add", "a.txt"], work)
  git(["commit", "-qm", "init"], work)
  spawnSync("tar", ["-cf", "a.tar", "a.txt"], { cwd: work })
  mkdirSync(join(root, "home"))
  return { root, work, config: readFileSync(join(work, ".git", "config"), "utf8") }
}

const gitEnv = (root: string): NodeJS.ProcessEnv => ({
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  HOME: join(root, "home"),
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "fuzz",
  GIT_AUTHOR_EMAIL: "fuzz@example.com",
  GIT_COMMITTER_NAME: "fuzz",
  GIT_COMMITTER_EMAIL: "fuzz@example.com",
  LANG: "C"
})

describe("fuzzing: composed lines that really delete or push are refused", () => {
  it(`${CASES} composed lines (seed ${SEED})`, { timeout: Math.max(120_000, CASES * 2_000) }, () => {
    const { root, work, config } = scratch()
    const next = random(SEED)
    const pick = <T>(list: ReadonlyArray<T>): T => list[Math.floor(next() * list.length)] as T
    const usable = available(commands).map(([command]) => command)
    const around = available(wrappers).map(([wrapper]) => wrapper)
    const context = { root: work, directory: work, home: join(root, "home") }
    const victim = join(work, "victim")
    const fuzzRef = join(root, "remote.git", "refs", "heads", "fuzz")
    const pushed = () =>
      existsSync(fuzzRef) ||
      (existsSync(join(root, "remote.git", "packed-refs")) &&
        readFileSync(join(root, "remote.git", "packed-refs"), "utf8").includes("refs/heads/fuzz"))
    let bit = 0
    let refused = 0
    const escaped: Array<string> = []
    for (let n = 0; n < CASES; n++) {
      let line: string
      if (next() < 0.12) line = pick(lines)
      else {
        const chain = Array.from({ length: Math.floor(next() * 3) }, () => pick(around))
        line = `${[...chain, pick(usable)].join(" ")}${pick(redirects)}`
      }
      for (let depth = Math.floor(next() * 3); depth > 0; depth--) line = pick(containers)(line)
      // A process a previous line left behind (a `setsid` escapes the kill) may still delete: set up again.
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          mkdirSync(victim, { recursive: true })
          writeFileSync(join(victim, "keep.txt"), "precious\n")
          break
        } catch {}
      }
      rmSync(fuzzRef, { force: true })
      writeFileSync(join(work, ".git", "config"), config)
      // Each flock gets its own lock file (nested flocks on one file would wait for each other forever); `timeout`
      // runs the line in its own process group and kills all of it.
      let locks = 0
      line = line.replaceAll("/tmp/lathe-fuzz.lock", () => `/tmp/lathe-fuzz-${n}-${locks++}.lock`)
      spawnSync("timeout", ["-s", "KILL", "20", "bash", "-c", line], { cwd: work, env: gitEnv(root), stdio: "ignore" })
      for (let lock = 0; lock < locks; lock++) rmSync(`/tmp/lathe-fuzz-${n}-${lock}.lock`, { force: true })
      const damage = !existsSync(join(victim, "keep.txt")) || pushed()
      const decision = decide(parser, context, ruleset, line)
      if (decision === "deny" || decision === "person") refused++
      if (!damage) continue
      bit++
      if (decision !== "deny" && decision !== "person") escaped.push(`${decision}: ${line}`)
    }
    process.stdout.write(`bash fuzz: ${CASES} lines generated, ${bit} bit, ${refused} refused (seed ${SEED})\n`)
    // The payloads really work under plain bash: most composed lines do damage.
    assert.isAbove(bit, CASES / 2)
    assert.deepStrictEqual(escaped, [])
  })
})
