/**
 * Normalising one simple command's argv: wrappers that only change how a command runs (`sudo`, `env`,
 * `timeout`, `nice`, `nohup`, `command`, `exec` …) are stripped, program paths are reduced to their basename
 * and git's global options are dropped, so rules see the command that really runs.
 */
import { type Arg, hasBraces, literal } from "./bash-word.js"

export type { Arg } from "./bash-word.js"

/** Per wrapper: options that take a value (the next word), and what else comes before the command. */
interface Wrapper {
  readonly valued: ReadonlySet<string>
  /** How many positionals come before the command: `timeout DURATION cmd`, `chroot DIR cmd`. */
  readonly positional?: number
  /** `env NAME=VALUE cmd`: assignments before the command. */
  readonly assignments?: boolean
}

const wrapper = (valued: ReadonlyArray<string>, extra: Omit<Wrapper, "valued"> = {}): Wrapper => ({
  valued: new Set(valued),
  ...extra
})

const WRAPPERS: ReadonlyMap<string, Wrapper> = new Map([
  ["command", wrapper([])],
  ["builtin", wrapper([])],
  ["exec", wrapper(["-a"])],
  ["nohup", wrapper([])],
  ["time", wrapper(["-f", "--format", "-o", "--output"])],
  ["env", wrapper(["-u", "--unset", "-C", "--chdir", "-S", "--split-string"], { assignments: true })],
  [
    "sudo",
    wrapper(
      [
        ..."-u --user -g --group -h --host -p --prompt -C --close-from -D --chdir -r --role -t --type -U".split(" "),
        ..."--other-user -T --command-timeout -R --chroot".split(" ")
      ],
      { assignments: true }
    )
  ],
  ["doas", wrapper(["-u", "-C"])],
  ["timeout", wrapper(["-s", "--signal", "-k", "--kill-after"], { positional: 1 })],
  ["nice", wrapper(["-n", "--adjustment"])],
  ["ionice", wrapper(["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"])],
  ["stdbuf", wrapper(["-i", "-o", "-e", "--input", "--output", "--error"])],
  ["setsid", wrapper([])],
  ["chroot", wrapper(["--userspec", "--groups"], { positional: 1 })],
  ["watch", wrapper(["-n", "--interval", "-q", "--equexit"])],
  ["taskset", wrapper([], { positional: 1 })],
  ["chrt", wrapper([], { positional: 1 })],
  ["unbuffer", wrapper([])],
  ["coproc", wrapper([])],
  ["busybox", wrapper([])],
  ["flock", wrapper(["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"], { positional: 1 })],
  ["unshare", wrapper(["-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd", "--propagation"])],
  ["xargs", wrapper("-I -L -l -n -P -d -E -e -s -a --max-args --max-procs --delimiter --arg-file".split(" "))]
])

/** What is left of a command once its wrappers are stripped. */
export interface Unwrapped {
  /** The command that runs (the wrapper itself when nothing follows it: `env`, `sudo -l`). */
  readonly argv: ReadonlyArray<Arg>
  /** `watch 'a; b'`, `env -S 'a b'`, `flock f -c 'a'`: words the wrapper hands to a shell as one line. */
  readonly script?: ReadonlyArray<Arg>
  /** `env -C dir`, `sudo -D dir`: where the command runs. */
  readonly chdir?: Arg
  /** `xargs`: arguments read at run time are appended to the command. */
  readonly openEnded?: boolean
  /** `xargs -I R`: the text that stands for input read at run time. */
  readonly replace?: string
  /** Assignments made for the command by `env NAME=VALUE` (as `NAME=VALUE`). */
  readonly assigned: ReadonlyArray<string>
}

/** A program path's last component: `/usr/bin/rm` → `rm`. */
export const basename = (path: string): string => path.slice(path.lastIndexOf("/") + 1)

const isOption = (arg: Arg): boolean => !arg.dynamic && arg.value.startsWith("-") && arg.value !== "-"

/** `--name=value` → `--name`; `-tDIR` stays whole (the caller checks attached values). */
const optionName = (value: string): string => (value.includes("=") ? value.slice(0, value.indexOf("=")) : value)

/**
 * Strips wrappers and their options from the front of `argv`, repeatedly (`sudo env X=1 timeout 5 rm x` is
 * `rm x`). `command -v` and `command -V` only look a name up, and stay as they are.
 */
export const unwrap = (input: ReadonlyArray<Arg>): Unwrapped => {
  let rest = input
  let chdir: Arg | undefined
  let openEnded = false
  let replace: string | undefined
  const assigned: Array<string> = []
  for (;;) {
    const head = rest[0]
    const name = head && !head.dynamic && !head.glob && !hasBraces(head) ? basename(head.value) : undefined
    const spec = name === undefined ? undefined : WRAPPERS.get(name)
    if (!head || !spec) break
    if (name === "command" && rest.some((arg) => arg.value === "-v" || arg.value === "-V")) break
    let i = 1
    let positional = spec.positional ?? 0
    let script: Arg | undefined
    let exec = false
    while (i < rest.length) {
      const arg = rest[i] as Arg
      if (!arg.dynamic && arg.value === "--") {
        i++
        break
      }
      if (isOption(arg)) {
        const option = optionName(arg.value)
        const attached = arg.value.includes("=") ? literal(arg.value.slice(option.length + 1)) : undefined
        const value = spec.valued.has(option) ? (attached ?? rest[i + 1]) : undefined
        if (name === "env" && (option === "-S" || option === "--split-string")) script = value
        if ((name === "env" || name === "sudo") && (option === "-C" || option === "--chdir" || option === "-D")) {
          if (name === "env" || option !== "-C") chdir = value
        }
        if (name === "watch" && (option === "-x" || option === "--exec")) exec = true
        if (name === "xargs" && (option.startsWith("-I") || option.startsWith("-i") || option === "--replace")) {
          replace = option === "-I" ? value?.value : attached?.value || arg.value.slice(2) || "{}"
        }
        if (name === "flock" && (option === "-c" || option === "--command") && positional === 0) {
          return { argv: [], script: [rest[i + 1] ?? literal("")], assigned }
        }
        i += spec.valued.has(option) && attached === undefined ? 2 : 1
        continue
      }
      if (spec.assignments && !arg.dynamic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(arg.value)) {
        assigned.push(arg.value)
        i++
        continue
      }
      if (positional > 0) {
        positional--
        i++
        continue
      }
      break
    }
    const after = rest.slice(i)
    if (script) return { argv: [], script: [script, ...after], ...(chdir ? { chdir } : {}), assigned }
    if (name === "flock" && after[0]?.value === "-c") return { argv: [], script: after.slice(1, 2), assigned }
    if (name === "watch" && !exec && after.length > 0) return { argv: [], script: after, assigned }
    if (name === "xargs") {
      openEnded = replace === undefined
      rest = after.length > 0 ? after : [literal("echo")]
      continue
    }
    if (after.length === 0) break
    rest = after
  }
  return {
    argv: rest,
    ...(chdir ? { chdir } : {}),
    ...(openEnded ? { openEnded } : {}),
    ...(replace !== undefined ? { replace } : {}),
    assigned
  }
}

const GIT_VALUED = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path"])

/** `git -c` keys whose values git runs as commands (or which point git at programs or hooks). */
const GIT_CODE_KEYS =
  /^(alias\..*|core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy)|diff\.external|sequence\.editor|pager\..*|.*\.(textconv|command|cmd|program|helper|tool|clean|smudge|process|editor|pager|path))$/i

/** git without its global options, and the reason when a `-c` setting makes git run other code. */
export const stripGitGlobals = (argv: ReadonlyArray<Arg>): { argv: ReadonlyArray<Arg>; unknown?: string } => {
  let i = 1
  let unknown: string | undefined
  while (i < argv.length) {
    const arg = argv[i] as Arg
    if (arg.dynamic) return { argv, unknown: `git's global option ${arg.value} is computed at run time` }
    if (!arg.value.startsWith("-") || arg.value === "--") break
    const option = arg.value.startsWith("--") ? optionName(arg.value) : arg.value.slice(0, 2)
    const attached = arg.value.startsWith("--") ? arg.value.includes("=") : arg.value.length > 2
    const value = GIT_VALUED.has(option) ? (attached ? undefined : argv[i + 1]) : undefined
    if (option === "-c" || option === "--config-env") {
      const setting = attached ? arg.value.slice(option === "-c" ? 2 : option.length + 1) : (value?.value ?? "")
      if (value?.dynamic) unknown ??= `a git -c setting is computed at run time (${value.value})`
      else if (GIT_CODE_KEYS.test(setting.split("=")[0] ?? "")) unknown ??= `git -c ${setting} makes git run a command`
    }
    i += GIT_VALUED.has(option) && !attached ? 2 : 1
  }
  return { argv: [argv[0] as Arg, ...argv.slice(i)], ...(unknown ? { unknown } : {}) }
}

/** Tools whose second word names a subcommand: `always` offers `git push *` rather than `git *`. */
const SUBCOMMAND_TOOLS = new Set(
  (
    "git npm npx pnpm yarn bun deno cargo go docker podman kubectl helm gh pip pip3 uv poetry apt apt-get brew " +
    "systemctl nx make dotnet terraform gcloud aws az"
  ).split(" ")
)

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./~-]+$/

/** Renders argv as one shell-quoted line, the text rules match against (dynamic and glob words as written). */
export const renderArgv = (argv: ReadonlyArray<Arg>): string =>
  argv
    .map((arg) =>
      arg.dynamic || (arg.glob && !arg.placeholder) || SAFE_WORD.test(arg.value)
        ? arg.value
        : `'${arg.value.replaceAll("'", `'\\''`)}'`
    )
    .join(" ")

/** The `always` pattern offered for a command: `git push *` for subcommand tools, else `ls *`. */
export const alwaysPattern = (argv: ReadonlyArray<Arg>): string => {
  const [name, second] = argv
  if (!name) return "*"
  const sub = SUBCOMMAND_TOOLS.has(name.value) && second && !second.dynamic && /^[a-z][a-z0-9:_-]*$/.test(second.value)
  return sub ? `${renderArgv([name, second])} *` : `${renderArgv([name])} *`
}
