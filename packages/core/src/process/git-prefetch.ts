import { gitEnv, gitSafeShellPrelude } from "./git-safe.js"
import { runSafeGit } from "./run-git.js"
import { runProcess } from "./run-process.js"
import { startupMark, startupMarksOn } from "./startup-marks.js"

/**
 * The git commands whose output start-up needs. The CLI's entry starts them before it loads the heavy modules
 * (`prefetchStartupGit`), so on a large repository `git status` (tens of milliseconds of stat calls) runs in another
 * process during module loading instead of after it; `Paths` and `SystemPrompt` then take the results (`gitOutput`).
 */
export const startupGitCommands = {
  /**
   * The project root (Paths), answered by {@link locateShell} rather than by git: the folder holding the `.git` entry
   * git found, as one line, or facts for a notice (`lathe:<fact> <path>` lines, see `readLocated` in paths.ts).
   */
  toplevel: ["rev-parse", "--show-toplevel"],
  /** The root commits: the project's id (Paths). */
  rootCommits: ["rev-list", "--max-parents=0", "HEAD"],
  /** The branch (empty for a detached head), also in a repository without commits (the system prompt). */
  branch: ["branch", "--show-current"],
  /**
   * The uncommitted changes (the system prompt): changed tracked files and untracked ones, as `git status --porcelain`
   * lists them (an untracked folder is one line; what .gitignore ignores is left out). Last: on a large repository it
   * stats every file, and the questions before it are answered without waiting for it. Without optional locks: a
   * plain status may rewrite the index, holding `index.lock` meanwhile, and a `git commit` the person runs at that
   * moment would fail.
   */
  status: ["--no-optional-locks", "status", "--porcelain=v2", "--untracked-files=normal"]
} as const

/** How long a git command may take before it counts as failed. */
const TIMEOUT_MS = 5_000

/** Shared by every copy of this module in a process: the CLI's entry and its `run` build each bundle one. */
const KEY = Symbol.for("@lathe/core/git-prefetch")
type Waiting = Map<string, Promise<string | undefined>>

const waiting = (): Waiting => {
  const global = globalThis as { [KEY]?: Waiting }
  const found = global[KEY]
  if (found !== undefined) return found
  const created: Waiting = new Map()
  global[KEY] = created
  return created
}

const keyOf = (cwd: string, args: ReadonlyArray<string>): string => [cwd, ...args].join("\0")

/**
 * Runs hardened git (see git-safe.ts) in `cwd`: its trimmed stdout, or undefined when git is missing, fails, times
 * out or the repository's config cannot be made safe. Outside Windows through the one-shell path, which reads the
 * config and runs the command in one process start.
 */
const run = (cwd: string, args: ReadonlyArray<string>, timeoutMs: number = TIMEOUT_MS): Promise<string | undefined> =>
  process.platform !== "win32"
    ? (runInOneShell(cwd, [args], timeoutMs, false)[0] ?? Promise.resolve(undefined))
    : runSafeGit(cwd, args, { timeoutMs }).then(
        (result) => (result.exitCode === 0 && !result.timedOut ? result.stdout.toString("utf8").trim() : undefined),
        () => undefined
      )

/**
 * Starts `commands` in `cwd` now; a later `gitOutput` with the same directory and arguments takes the result.
 * Every command is hardened git (git-safe.ts): nothing the repository's config names runs.
 * Outside Windows they run one after another in a single `/bin/sh` at the lowest CPU priority: starting a process
 * blocks Node's thread for a few milliseconds (fork and exec), once here instead of once per command. Each command
 * keeps its own output and exit status (a failing one gives undefined, as it would alone), and each answer is there
 * as soon as its command ends: a slow `git status` at the end holds up only itself.
 */
export const prefetchGit = (
  cwd: string,
  commands: ReadonlyArray<ReadonlyArray<string>>,
  timeoutMs: number = TIMEOUT_MS
): void => {
  const map = waiting()
  const missing = commands.filter((args) => !map.has(keyOf(cwd, args)))
  if (missing.length === 0) return
  if (process.platform === "win32") {
    for (const args of missing) map.set(keyOf(cwd, args), run(cwd, args, timeoutMs))
    return
  }
  const answers = runInOneShell(cwd, missing, timeoutMs)
  for (const [i, args] of missing.entries()) map.set(keyOf(cwd, args), answers[i] ?? Promise.resolve(undefined))
}

/**
 * Runs each git command in turn in one shell, after the hardening prelude (one `git config` read of the key names
 * that name programs): a promise per command of its trimmed output (undefined when it failed, or had not ended when
 * the shell ended or was stopped after `timeoutMs`), settled as soon as that command ends. In the `background` (a
 * prefetch) at the lowest CPU priority.
 */
const runInOneShell = (
  cwd: string,
  commands: ReadonlyArray<ReadonlyArray<string>>,
  timeoutMs: number,
  background = true
): ReadonlyArray<Promise<string | undefined>> => {
  // After each command, a line no git output can contain (a fresh token) with the command's exit status.
  const token = `@@lathe-git-${process.pid}-${Date.now().toString(36)}`
  const marker = `\n${token} `
  const toplevel = startupGitCommands.toplevel.join("\0")
  const script = `${gitSafeShellPrelude()}\n${locateShell}\n${commands
    .map(
      (args) =>
        `${args.join("\0") === toplevel ? 'printf %s "$lathe_located"; [ -n "$lathe_located" ]' : `git "$@" ${args.map(quote).join(" ")} 2>/dev/null`}; printf '\\n${token} %d\\n' "$?"`
    )
    .join("; ")}`
  const settles: Array<(output: string | undefined) => void> = []
  const answers = commands.map(() => new Promise<string | undefined>((settle) => settles.push(settle)))
  let answered = 0
  let rest = ""
  const take = (chunk: string) => {
    rest += chunk
    for (;;) {
      const at = rest.indexOf(marker)
      const end = at < 0 ? -1 : rest.indexOf("\n", at + marker.length)
      if (end < 0 || answered >= commands.length) return
      const status = rest.slice(at + marker.length, end)
      if (startupMarksOn()) startupMark(`git answer ${commands[answered]?.join(" ").slice(0, 24)}`)
      settles[answered++]?.(status === "0" ? rest.slice(0, at).trim() : undefined)
      rest = rest.slice(end + 1)
    }
  }
  // In a process group of its own, stopped with everything in it (SIGKILL, no grace) at the time limit or when this
  // process exits: a status stopped at the time limit no longer stats a huge repository on for nobody, and outside
  // the terminal's process group a Ctrl-C no longer reaches it. The environment is git's hardened one (`gitEnv`): no
  // `GIT_DIR`, `GIT_WORK_TREE`, `GIT_CONFIG_PARAMETERS`… of this process's environment redirects these commands.
  const finish = () => {
    // Ended (or stopped, or never started): whatever did not answer by now, failed.
    while (answered < commands.length) settles[answered++]?.(undefined)
  }
  runProcess({
    file: "/bin/sh",
    args: ["-c", script],
    cwd,
    env: gitEnv(),
    timeoutMs,
    killGraceMs: 0,
    killOnExit: true,
    maxOutputBytes: 0,
    onOutput: (text, stream) => {
      if (stream === "stdout") take(text)
    },
    // At the lowest priority (inherited by the git processes): on a large repository `git status` stats every file
    // with several threads, and on a small machine that took CPU from this process's start-up, which is what the
    // answer waits for anyway (bench/loop.ts, 50,000 files, 2 cores: first request ~×0.9).
    onStart: (pid) => {
      try {
        if (background) process.getBuiltinModule("node:os").setPriority(pid, 19)
      } catch {
        // gone already, or not allowed: it runs at normal priority
      }
    }
  }).then(finish, finish)
  return answers
}

/**
 * POSIX sh, after the hardening prelude, that decides which repository the shell's git commands use, and exports it
 * (`GIT_DIR` and `GIT_WORK_TREE`, which win over the repository's `core.worktree` and `core.bare`). Bare repositories
 * are found only when named (`safe.bareRepository=explicit` in the prelude's options). The repository is the one git
 * found, with the folder holding its `.git` entry (a folder, or a file naming the git dir) as the work tree: the
 * nearest such folder at or above the working directory. That folder is refused when it is `/` or `$HOME` and not the
 * working directory itself. Without an accepted repository every later command fails as outside git. Sets
 * `lathe_located`: the root, with a `lathe:worktree <git's own top>` line when the config named another work tree;
 * or one `lathe:refused <top>`, `lathe:bare <folder>` or `lathe:unheld <git dir>` line; empty outside git. One git
 * process, as the `rev-parse --show-toplevel` it replaces.
 */
const locateShell = `nl='\n'
cr='\r'
cd -P . 2>/dev/null; lathe_here=$PWD
lathe_found=$(LC_ALL=C git "$@" rev-parse --absolute-git-dir --is-bare-repository --show-cdup 2>&1)
lathe_status=$?
lathe_located=
lathe_root=
if [ "$lathe_status" = 0 ]; then
  while :; do case $lathe_found in /*) break ;; *"$nl"*) lathe_found=\${lathe_found#*"$nl"} ;; *) break ;; esac; done
  lathe_gitdir=\${lathe_found%%"$nl"*}
  lathe_rest=\${lathe_found#"$lathe_gitdir"}; lathe_rest=\${lathe_rest#"$nl"}
  lathe_bare=\${lathe_rest%%"$nl"*}
  lathe_cdup=\${lathe_rest#"$lathe_bare"}; lathe_cdup=\${lathe_cdup#"$nl"}
  d=$lathe_here
  while :; do
    e=\${d%/}/.git; g=$e
    if [ -f "$e" ]; then
      g=
      IFS= read -r g 2>/dev/null <"$e"
      g=\${g%"$cr"}; g=\${g#gitdir: }
      case $g in /*) ;; *) g=\${d%/}/$g ;; esac
    fi
    if [ -e "$e" ] && [ "$g" -ef "$lathe_gitdir" ]; then lathe_root=$d; break; fi
    [ "$d" = / ] && break
    d=\${d%/*}; d=\${d:-/}
  done
  if [ -z "$lathe_root" ]; then
    lathe_located="lathe:unheld $lathe_gitdir"
  elif [ "$lathe_root" != "$lathe_here" ] && { [ "$lathe_root" = / ] || { [ -n "$HOME" ] && [ "$lathe_root" -ef "$HOME" ]; }; }; then
    lathe_located="lathe:refused $lathe_root"; lathe_root=
  else
    lathe_located=$lathe_root
    case $lathe_cdup in /*) lathe_top=$lathe_cdup ;; *) lathe_top=$lathe_here/$lathe_cdup ;; esac
    cd -P "$lathe_top" 2>/dev/null && lathe_top=$PWD; cd -P "$lathe_here" 2>/dev/null
    if [ "$lathe_bare" = true ]; then lathe_located="$lathe_located\${nl}lathe:worktree -"
    elif [ "$lathe_top" != "$lathe_root" ]; then lathe_located="$lathe_located\${nl}lathe:worktree $lathe_top"; fi
  fi
else
  case $lathe_found in *"cannot use bare repository '"*)
    lathe_bare=\${lathe_found#*"cannot use bare repository '"}; lathe_located="lathe:bare \${lathe_bare%%"' ("*}" ;;
  esac
fi
if [ -n "$lathe_root" ]; then GIT_DIR=$lathe_gitdir; GIT_WORK_TREE=$lathe_root; export GIT_WORK_TREE
else GIT_DIR=/dev/null/lathe-no-repository; fi
export GIT_DIR`

/** A word for `sh -c`, quoted unless it is plainly safe (the start-up commands are fixed; this keeps any safe). */
const quote = (word: string): string => (/^[\w./=-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`)

/** Starts every start-up git command in `cwd`. */
export const prefetchStartupGit = (cwd: string): void => prefetchGit(cwd, Object.values(startupGitCommands))

/**
 * The output of `git <args>` in `cwd`: a prefetched result when one is waiting (taken, so the next call runs git
 * afresh and never gets a stale answer), else a new run.
 */
export const gitOutput = (cwd: string, args: ReadonlyArray<string>): Promise<string | undefined> => {
  const map = waiting()
  const key = keyOf(cwd, args)
  const prefetched = map.get(key)
  if (prefetched === undefined) return run(cwd, args)
  map.delete(key)
  return prefetched
}
