/**
 * Normalising one simple command's argv: wrappers that only change how a command runs (`sudo`, `env`,
 * `timeout`, `nice`, `xargs`, `command`, `exec` …) are stripped, so rules see the command that really runs.
 */

/** An argv word: its value when known statically, else its source text and `dynamic`. */
export interface Arg {
  readonly value: string
  readonly dynamic: boolean
}

/** Per wrapper: options that take a value (the next word), and whether a leading positional is consumed. */
interface Wrapper {
  readonly valued: ReadonlySet<string>
  /** `timeout DURATION cmd`: one positional before the command. */
  readonly positional?: boolean
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
  ["time", wrapper([])],
  ["env", wrapper(["-u", "--unset", "-C", "--chdir"], { assignments: true })],
  [
    "sudo",
    wrapper(["-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C", "-D", "-r", "-t", "-U", "-T"])
  ],
  ["doas", wrapper(["-u", "-C"])],
  ["timeout", wrapper(["-s", "--signal", "-k", "--kill-after"], { positional: true })],
  ["nice", wrapper(["-n", "--adjustment"])],
  ["ionice", wrapper(["-c", "--class", "-n", "--classdata", "-p", "-P", "-u"])],
  ["stdbuf", wrapper(["-i", "-o", "-e", "--input", "--output", "--error"])],
  ["xargs", wrapper(["-I", "-L", "-n", "-P", "-d", "-E", "-s", "-a", "--max-args", "--max-procs", "--delimiter"])]
])

/** Tools whose second word names a subcommand: `always` offers `git push *` rather than `git *`. */
const SUBCOMMAND_TOOLS = new Set([
  "git",
  "npm",
  "npx",
  "pnpm",
  "yarn",
  "bun",
  "deno",
  "cargo",
  "go",
  "docker",
  "podman",
  "kubectl",
  "helm",
  "gh",
  "pip",
  "pip3",
  "uv",
  "poetry",
  "apt",
  "apt-get",
  "brew",
  "systemctl",
  "nx",
  "make",
  "dotnet",
  "terraform",
  "gcloud",
  "aws",
  "az"
])

const isOption = (arg: Arg): boolean => !arg.dynamic && arg.value.startsWith("-") && arg.value !== "-"

/**
 * Strips wrappers and their options from the front of `argv`, repeatedly (`sudo env X=1 timeout 5 rm x` is
 * `rm x`). A wrapper with nothing after it is itself the command (`env`, `sudo -l`). `command -v` and
 * `command -V` only look a name up, and stay as they are.
 */
export const stripWrappers = (argv: ReadonlyArray<Arg>): ReadonlyArray<Arg> => {
  let rest = argv
  for (;;) {
    const head = rest[0]
    const spec = head && !head.dynamic ? WRAPPERS.get(head.value) : undefined
    if (!head || !spec) return rest
    if (head.value === "command" && rest.some((arg) => arg.value === "-v" || arg.value === "-V")) return rest
    let i = 1
    let positional = spec.positional ?? false
    while (i < rest.length) {
      const arg = rest[i] as Arg
      if (!arg.dynamic && arg.value === "--") {
        i++
        break
      }
      if (isOption(arg)) {
        const name = arg.value.includes("=") ? arg.value.slice(0, arg.value.indexOf("=")) : arg.value
        i += spec.valued.has(name) && !arg.value.includes("=") ? 2 : 1
        continue
      }
      if (spec.assignments && !arg.dynamic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(arg.value)) {
        i++
        continue
      }
      if (positional) {
        positional = false
        i++
        continue
      }
      break
    }
    if (i >= rest.length) return head.value === "xargs" ? [{ value: "echo", dynamic: false }] : rest
    rest = rest.slice(i)
  }
}

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./~-]+$/

/** Renders argv as one shell-quoted line, the text rules match against (dynamic words as written). */
export const renderArgv = (argv: ReadonlyArray<Arg>): string =>
  argv
    .map((arg) => (arg.dynamic || SAFE_WORD.test(arg.value) ? arg.value : `'${arg.value.replaceAll("'", `'\\''`)}'`))
    .join(" ")

/** The `always` pattern offered for a command: `git push *` for subcommand tools, else `ls *`. */
export const alwaysPattern = (argv: ReadonlyArray<Arg>): string => {
  const [name, second] = argv
  if (!name) return "*"
  const sub = SUBCOMMAND_TOOLS.has(name.value) && second && !second.dynamic && /^[a-z][a-z0-9:_-]*$/.test(second.value)
  return sub ? `${renderArgv([name, second])} *` : `${renderArgv([name])} *`
}

/** Commands whose non-option arguments are paths they write, create or delete. */
const WRITERS = new Set(["rm", "rmdir", "touch", "mkdir", "tee", "truncate", "shred", "unlink"])
/** Commands whose last argument is the path they write. */
const LAST_WRITERS = new Set(["cp", "mv", "ln", "install", "rsync"])

/** The paths a (normalised) command writes to, as written: static words only. */
export const commandWrites = (argv: ReadonlyArray<Arg>): Array<string> => {
  const [name, ...args] = argv
  if (!name || name.dynamic) return []
  const operands = args.filter((arg) => !arg.dynamic && !isOption(arg)).map((arg) => arg.value)
  if (WRITERS.has(name.value)) return operands
  if (LAST_WRITERS.has(name.value)) return operands.length > 1 ? operands.slice(-1) : []
  if (name.value === "dd") return args.flatMap((arg) => (arg.value.startsWith("of=") ? [arg.value.slice(3)] : []))
  return []
}
