/**
 * The paths a program writes, read from its argv: the write routes of the common file tools. Dynamic words of a
 * writing program count as unknown writes, since one could be a path, or an option naming one (`-t DIR`).
 */
import { type Arg, literal } from "./bash-word.js"

/** What one command writes: static targets, and dynamic words that may name a target. */
export interface CommandWrites {
  readonly targets: ReadonlyArray<Arg>
  readonly unknown: ReadonlyArray<Arg>
}

interface Parsed {
  readonly options: ReadonlyArray<{ readonly name: string; readonly value?: Arg }>
  readonly operands: ReadonlyArray<Arg>
}

/** Splits args into options (with the values of `valued` ones, separate or attached) and operands. */
const parse = (args: ReadonlyArray<Arg>, valued: ReadonlySet<string>): Parsed => {
  const options: Array<{ name: string; value?: Arg }> = []
  const operands: Array<Arg> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as Arg
    if (arg.dynamic || !arg.value.startsWith("-") || arg.value === "-") {
      operands.push(arg)
      continue
    }
    if (arg.value === "--") {
      operands.push(...args.slice(i + 1))
      break
    }
    if (arg.value.startsWith("--")) {
      const eq = arg.value.indexOf("=")
      const name = eq < 0 ? arg.value : arg.value.slice(0, eq)
      if (eq >= 0) options.push({ name, value: { ...arg, value: arg.value.slice(eq + 1) } })
      else if (valued.has(name)) options.push({ name, ...(args[i + 1] ? { value: args[++i] as Arg } : {}) })
      else options.push({ name })
      continue
    }
    // A short cluster: `-rf`, `-tDIR`, `-t DIR`; the first valued letter takes the rest or the next word.
    for (let j = 1; j < arg.value.length; j++) {
      const name = `-${arg.value[j]}`
      if (!valued.has(name)) {
        options.push({ name })
        continue
      }
      const rest = arg.value.slice(j + 1)
      if (rest !== "") options.push({ name, value: { ...arg, value: rest } })
      else options.push({ name, ...(args[i + 1] ? { value: args[++i] as Arg } : {}) })
      break
    }
  }
  return { options, operands }
}

const set = (text: string): ReadonlySet<string> => new Set(text.split(" ").filter((word) => word !== ""))

/** Programs whose operands are all paths they write, create or delete; with their valued options. */
const ALL_OPERANDS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["rm", set("")],
  ["rmdir", set("")],
  ["unlink", set("")],
  ["tee", set("--output-error")],
  ["touch", set("-r -d -t --reference --date")],
  ["mkdir", set("-m --mode --context")],
  ["truncate", set("-s -r --size --reference")],
  ["shred", set("-n -s --iterations --size --random-source")]
])

/** Programs writing to their last operand, or to `-t DIR`. */
const TARGET_DIR: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["cp", set("-S --suffix -t --target-directory --backup --sparse --reflink --preserve --no-preserve --context")],
  ["mv", set("-S --suffix -t --target-directory --backup")],
  ["ln", set("-S --suffix -t --target-directory --backup")],
  ["install", set("-S --suffix -t --target-directory -m --mode -o --owner -g --group --strip-program -Z")],
  ["rsync", set("-e --rsh -f --filter --exclude --include --exclude-from --include-from --files-from -T")]
])

const CHANGE_MODE = set("chmod chown chgrp")
const MODE_FLAGS = /^-[rwxXst]+$/

/** The paths a command writes, given its normalised argv (program name first). */
export const commandWrites = (argv: ReadonlyArray<Arg>): CommandWrites => {
  const [name, ...args] = argv
  if (!name) return { targets: [], unknown: [] }
  const program = name.value
  const dynamic = args.filter((arg) => arg.dynamic)
  const of = (targets: ReadonlyArray<Arg>): CommandWrites => ({ targets, unknown: dynamic })
  const all = ALL_OPERANDS.get(program)
  if (all) return of(parse(args, all).operands.filter((arg) => !arg.dynamic))
  const targetDir = TARGET_DIR.get(program)
  if (targetDir) {
    const { options, operands } = parse(args, targetDir)
    const statics = operands.filter((arg) => !arg.dynamic)
    const dir = options.find((option) => option.name === "-t" || option.name === "--target-directory")
    if (dir?.value) return of([dir.value])
    if (program === "install" && options.some((option) => option.name === "-d" || option.name === "--directory")) {
      return of(statics)
    }
    const remote = (arg: Arg) => program === "rsync" && /^[^/]*:/.test(arg.value)
    if (statics.length === 1 && program === "ln") return of([{ ...(statics[0] as Arg), value: "." }])
    const last = operands.at(-1)
    return of(last && !last.dynamic && operands.length > 1 && !remote(last) ? [last] : [])
  }
  if (CHANGE_MODE.has(program)) {
    const { options, operands } = parse(args, set("--reference --from"))
    const modeGiven =
      options.some((option) => option.name === "--reference") ||
      (program === "chmod" && args.some((arg) => !arg.dynamic && MODE_FLAGS.test(arg.value) && arg.value !== "-R"))
    return of((modeGiven ? operands : operands.slice(1)).filter((arg) => !arg.dynamic))
  }
  if (program === "dd") {
    const targets = args.filter((arg) => !arg.dynamic && arg.value.startsWith("of="))
    return of(targets.map((arg) => ({ ...arg, value: arg.value.slice(3) })))
  }
  if (program === "sed") {
    const { options, operands } = parse(args, set("-e -f -l --expression --file --line-length"))
    const inPlace = options.some((option) => option.name === "-i" || option.name === "--in-place")
    if (!inPlace) return { targets: [], unknown: dynamic }
    const scripted = options.some((option) => ["-e", "-f", "--expression", "--file"].includes(option.name))
    return of((scripted ? operands : operands.slice(1)).filter((arg) => !arg.dynamic))
  }
  const output = OUTPUT_OPTION.get(program)
  if (output) {
    const { options } = parse(args, output)
    const targets = options.flatMap((option) => (output.has(option.name) && option.value ? [option.value] : []))
    return { targets, unknown: targets.length > 0 ? dynamic : [] }
  }
  return { targets: [], unknown: [] }
}

/** Programs writing where an option says: `sort -o FILE`, `curl -o FILE`, `wget -O FILE`. */
const OUTPUT_OPTION: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["sort", set("-o --output")],
  ["curl", set("-o --output")],
  ["wget", set("-O --output-document -P --directory-prefix")]
])

/**
 * What one command may create or replace that a later write of the line could go through: a link (`ln`, `cp -a`),
 * a moved file, an extracted archive or checkout. A write through such a path lands wherever the new path points,
 * which is only known at run time.
 */
export interface CommandCreates {
  /** Paths it may create or replace; a folder stands for everything it may put in it (`.` for its cwd). */
  readonly paths: ReadonlyArray<Arg>
  /** Set when its destinations are not known statically (any path may be one): why. */
  readonly anywhere?: string
}

/**
 * Programs known to create nothing a later write could go through: they only read, print or remove, or create
 * nothing but real folders and regular files at the paths they write (which are checked as writes themselves).
 */
const CREATES_NOTHING = set(
  "echo printf cat tac nl head tail wc sort uniq cut paste tr fold fmt column expand unexpand rev grep egrep fgrep " +
    "rg ag ack ls tree stat file du df md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum base64 " +
    "base32 xxd od hexdump strings diff cmp comm join test [ [[ true false : pwd cd pushd popd dirs sleep date " +
    "whoami id hostname uname uptime env printenv which whereis type command hash basename dirname realpath " +
    "readlink seq expr bc jq yq less more man export unset set shift read local declare typeset readonly return " +
    "exit wait kill ps pgrep nproc free find sed awk gawk mawk nawk tee touch mkdir truncate rm rmdir unlink shred " +
    "chmod chown chgrp dd curl wget"
)

/** git subcommands that leave the work tree's files alone (they write only under `.git`, or nothing). */
const GIT_KEEPS_WORKTREE = set(
  "status log diff show add commit push fetch rev-parse ls-files ls-tree grep blame describe shortlog remote config " +
    "branch tag cat-file show-ref for-each-ref reflog help version init notes count-objects var"
)

/** Archivers that extract into their cwd, or into the folder an option names. */
const EXTRACTORS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["tar", set("-C --directory")],
  ["bsdtar", set("-C --directory")],
  ["gtar", set("-C --directory")],
  ["unzip", set("-d")],
  ["cpio", set("-D --directory")],
  ["pax", set("")],
  ["7z", set("")],
  ["7za", set("")],
  ["7zr", set("")],
  ["ar", set("")],
  ["unrar", set("")],
  ["jar", set("-C")]
])

/** `cp` options that make it copy links as links (or make links) instead of the files' contents. */
const CP_LINKS = /^-[A-Za-z]*[adPRrls]|^--(archive|no-dereference|recursive|link|symbolic-link|preserve)/

/**
 * What a command may create or replace, given its normalised argv (program name first). Fails open only for
 * programs known to create nothing; any other program may create the paths it names.
 */
export const commandCreates = (argv: ReadonlyArray<Arg>): CommandCreates => {
  const [name, ...args] = argv
  if (!name || CREATES_NOTHING.has(name.value)) return { paths: [] }
  const program = name.value
  const dynamic = args.find((arg) => arg.dynamic)
  if (program === "git") {
    const sub = args.find((arg) => arg.dynamic || !arg.value.startsWith("-"))
    if (sub && !sub.dynamic && GIT_KEEPS_WORKTREE.has(sub.value)) return { paths: [] }
    return { paths: [], anywhere: `git ${sub?.value ?? ""} may check out links anywhere in the work tree` }
  }
  if (program === "cp" && !args.some((arg) => arg.dynamic || CP_LINKS.test(arg.value))) return { paths: [] }
  if (TARGET_DIR.has(program)) {
    if (dynamic) return { paths: [], anywhere: `${program} creates a path computed at run time (${dynamic.value})` }
    return { paths: commandWrites(argv).targets }
  }
  const operands = args.filter((arg) => !arg.dynamic && !arg.value.startsWith("-"))
  const extractor = EXTRACTORS.get(program)
  if (!extractor) return { paths: operands }
  const { options } = parse(args, extractor)
  const folders = options.flatMap((option) => (extractor.has(option.name) && option.value ? [option.value] : []))
  const attached = args.filter((arg) => /^-o./.test(arg.value) && program.startsWith("7z"))
  return {
    paths: [literal("."), ...folders, ...attached.map((arg) => ({ ...arg, value: arg.value.slice(2) })), ...operands]
  }
}
