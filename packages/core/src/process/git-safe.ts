/**
 * One hardened way to run git for Lathe's own calls (start-up prefetch, snapshots, workspaces, git context, `@`
 * mentions). A cloned repository is written by a stranger, and its `.git/config` (or a file it includes, or the
 * config of a linked worktree's common dir) can name programs git runs on its own: an fsmonitor hook on every
 * `status`, filters chosen by `.gitattributes`, hooks, pagers, editors, diff and merge drivers, credential helpers.
 * Lathe runs git outside any sandbox, so every such program is switched off:
 *
 * - fixed keys by `-c key=value` before the subcommand (the command line wins over every config file);
 * - keys named per driver (`filter.<driver>.clean`…) by reading the config's key names first with
 *   `git config --name-only --get-regexp`, which reads config and runs nothing, then one `-c` per key found;
 * - programs git takes from the environment first (pager, editor, askpass, proxy) by setting those variables, and
 *   lazy fetches of a partial clone's missing objects (which run the promisor remote's upload-pack) switched off.
 *
 * An empty value never runs anything: a filter, the fsmonitor and a credential helper list are then off; a textconv,
 * diff or merge driver set to "" makes the command that needs it fail ("cannot run"). Commands that show diffs pass
 * `--no-ext-diff --no-textconv`; commands that look at submodules pass `--ignore-submodules=all` (a submodule's own
 * config is not read here, and `.gitmodules` can override the `diff.ignoreSubmodules` set below); commands that reach
 * a remote pass {@link GIT_SAFE_TRANSPORT} (`remote.<name>.uploadpack` is first-wins, so `-c` cannot replace it).
 */
import { runProcess } from "./run-process.js"

/** Fixed options before the subcommand of every Lathe git call. */
export const GIT_SAFE_OPTIONS: ReadonlyArray<string> = [
  "--no-pager",
  ...[
    "core.fsmonitor=false",
    // A folder is a repository only through a `.git` entry or a `--git-dir` Lathe names: a downloaded tree whose
    // files make it a bare repository (with `core.worktree = /`) is not discovered.
    "safe.bareRepository=explicit",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=:",
    "sequence.editor=:",
    "core.askPass=",
    "protocol.ext.allow=never",
    "protocol.fd.allow=never",
    "submodule.recurse=false",
    "diff.ignoreSubmodules=all"
  ].flatMap((setting) => ["-c", setting])
]

/** Options for commands that reach a remote (`clone`, `fetch`, `ls-remote`): git's own upload-pack, whatever config says. */
export const GIT_SAFE_TRANSPORT: ReadonlyArray<string> = ["--upload-pack=git-upload-pack"]

/**
 * Config keys that name a program, whichever file sets them: attributes in the work tree pick filter, diff and merge
 * drivers by name, so even a driver from the person's own config would run on whatever the repository chose.
 * Matched against git's canonical names (section and key lowercased, the driver's name as written).
 */
const PROGRAM_KEYS =
  "filter\\..+\\.(clean|smudge|process|required)|diff\\..+\\.(command|textconv)|diff\\.external|" +
  "merge\\..+\\.driver|hook\\..+\\.command|gpg\\.(.+\\.)?program|gpg\\.ssh\\.defaultkeycommand|" +
  "core\\.alternaterefscommand"

/**
 * Keys that matter only when git reaches a remote, switched off only when the repository itself sets them (`local`
 * or `worktree` scope, included files too): the person's own credential helper and ssh command keep working.
 */
const REMOTE_KEYS = "credential\\..+|core\\.sshcommand"

/** An extended regular expression (git's and JavaScript's) matching a whole key against alternatives. */
const whole = (...alternatives: ReadonlyArray<string>) => `^(${alternatives.join("|")})$`

/** The `git config` arguments that list the keys {@link safeGitOverrides} reads, with the file scope of each. */
export const GIT_SAFE_QUERY: ReadonlyArray<string> = [
  "config",
  "--show-scope",
  "--name-only",
  "--get-regexp",
  whole(PROGRAM_KEYS, REMOTE_KEYS)
]

/**
 * A repository's config names a program in a way Lathe cannot switch off, so Lathe runs no git there. A plain `Error`
 * with a `_tag` (Effect's `catchTag` matches it), not an effect `Schema` class: this module is part of what every
 * `lathe` start loads before it reads its arguments (`git-prefetch.ts`), and must not load effect. Effect code
 * that calls {@link prepareSafeGit} wraps the rejection in its own tagged error.
 */
export class GitConfigRefused extends Error {
  readonly _tag = "GitConfigRefused"
  /** The config key that cannot be overridden. */
  readonly key: string

  constructor(fields: { readonly key: string; readonly message: string }) {
    super(fields.message)
    this.name = "GitConfigRefused"
    this.key = fields.key
  }
}

const refuse = (key: string) =>
  new GitConfigRefused({
    key,
    message:
      `The git config here sets "${key}", a program key whose name holds "=", which git's -c cannot override; ` +
      "Lathe runs no git in this repository. Rename that driver (or remove the key) to let Lathe use git here."
  })

/**
 * The `-c` options that switch off what a `git config --show-scope --name-only --get-regexp` listing names (one
 * `scope<TAB>key` per line; a line without a tab counts as the repository's own). Fails when a key cannot be
 * overridden from the command line.
 */
export const safeGitOverrides = (listing: string): ReadonlyArray<string> | GitConfigRefused => {
  const program = new RegExp(whole(PROGRAM_KEYS))
  const options: Array<string> = []
  let credentials = false
  let ssh = false
  for (const line of listing.split("\n")) {
    if (line === "") continue
    const tab = line.indexOf("\t")
    const scope = tab < 0 ? "local" : line.slice(0, tab)
    const key = tab < 0 ? line : line.slice(tab + 1)
    if (program.test(key)) {
      if (key.includes("=")) return refuse(key)
      options.push("-c", `${key}=${key.endsWith(".required") ? "false" : ""}`)
    } else if (scope === "local" || scope === "worktree") {
      if (key.startsWith("credential.") && key.endsWith("helper")) credentials = true
      if (key === "core.sshcommand") ssh = true
    }
  }
  // An empty helper empties the whole list (URL-scoped helpers too); read last, the command line does it after files.
  if (credentials) options.push("-c", "credential.helper=")
  if (ssh) options.push("-c", "core.sshCommand=ssh")
  return options
}

/**
 * The environment of Lathe's git calls: `env` with the programs git takes from variables first switched off. The
 * person's own git variables (`GIT_DIR`, `GIT_SSH_COMMAND`…) stay here; {@link gitEnv}, what Lathe's calls use,
 * removes those that redirect git.
 */
export const gitSafeEnv = (env: NodeJS.ProcessEnv = process.env): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value
  delete out.GIT_EXTERNAL_DIFF
  return {
    ...out,
    GIT_PAGER: "cat",
    GIT_EDITOR: ":",
    GIT_SEQUENCE_EDITOR: ":",
    // An empty GIT_ASKPASS wins over core.askPass and SSH_ASKPASS and runs nothing; git never prompts.
    GIT_ASKPASS: "",
    SSH_ASKPASS: "",
    GIT_TERMINAL_PROMPT: "0",
    // An empty proxy command wins over core.gitProxy (which is first-wins, so -c could not replace it).
    GIT_PROXY_COMMAND: "",
    // A repository that says it is a partial clone, with an object missing, makes even `git status` fetch it from
    // its "promisor" remote, running that remote's uploadpack / sshCommand. Lathe's calls never need that fetch.
    // (git 2.39.4 and later honour this variable; older ones do not.)
    GIT_NO_LAZY_FETCH: "1"
  }
}

/**
 * The person's git variables that Lathe's git calls keep: where their global config is, git's own programs, the ssh
 * they reach remotes with, tracing. Every other `GIT_*` variable (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`,
 * `GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`…) would point git at another repository, index or config than the one
 * Lathe names, and may come from a project's own environment files, so it is dropped.
 */
const KEPT_GIT_VARIABLE = /^GIT_(CONFIG_GLOBAL|CONFIG_NOSYSTEM|EXEC_PATH|SSH|SSH_COMMAND|TRACE\w*)$/

/**
 * The hardened environment of every git call Lathe makes for itself: `env` without the `GIT_*` variables that
 * redirect git (all but {@link KEPT_GIT_VARIABLE}'s), then {@link gitSafeEnv}.
 */
export const gitEnv = (env: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> => {
  const kept: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || (key.startsWith("GIT_") && !KEPT_GIT_VARIABLE.test(key))) continue
    kept[key] = value
  }
  return gitSafeEnv(kept)
}

/** How one hardened git call is made: the options before its subcommand, and its environment. */
export interface SafeGit {
  /** {@link GIT_SAFE_OPTIONS}, then one `-c` per program key the config holds. Goes before the subcommand. */
  readonly options: ReadonlyArray<string>
  /** {@link gitEnv} of the environment given. */
  readonly env: Record<string, string>
}

/** Where and how to run git for {@link prepareSafeGit}. */
export interface SafeGitTarget {
  /** The git binary. Default "git". */
  readonly binary?: string
  /** Options the calls will put first (`--git-dir`, `--work-tree`…): the config is read the way those calls read it. */
  readonly global?: ReadonlyArray<string>
  /** The base environment, before {@link gitEnv} drops its redirecting `GIT_*` variables. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv
  /** Limit for reading the config. Default 5 s. */
  readonly timeoutMs?: number
}

const readKeys = (
  cwd: string,
  binary: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  timeoutMs: number
): Promise<{ readonly code: number; readonly stdout: string }> =>
  runProcess({ file: binary, args, cwd, env, timeoutMs, killGraceMs: 0 }).then(
    (result) => ({ code: result.exitCode ?? -1, stdout: result.stdout.toString("utf8") }),
    () => ({ code: -1, stdout: "" })
  )

/**
 * Reads the config git would read in `cwd` (key names only: nothing runs) and returns the options and environment
 * that make a git call there ignore every program the config names. Rejects with {@link GitConfigRefused} when a key
 * cannot be overridden. A git too old for `--show-scope` (before 2.26) has every key treated as the repository's.
 */
export const prepareSafeGit = async (cwd: string, target: SafeGitTarget = {}): Promise<SafeGit> => {
  const binary = target.binary ?? "git"
  const env = gitEnv(target.env ?? process.env)
  const timeoutMs = target.timeoutMs ?? 5_000
  const global = [...(target.global ?? []), ...GIT_SAFE_OPTIONS]
  let read = await readKeys(cwd, binary, [...global, ...GIT_SAFE_QUERY], env, timeoutMs)
  if (read.code === 129)
    read = await readKeys(
      cwd,
      binary,
      [...global, ...GIT_SAFE_QUERY.filter((arg) => arg !== "--show-scope")],
      env,
      timeoutMs
    )
  const overrides = safeGitOverrides(read.stdout)
  if (overrides instanceof GitConfigRefused) throw overrides
  return { options: [...GIT_SAFE_OPTIONS, ...overrides], env }
}

/**
 * POSIX sh that sets the positional parameters to the hardened options for git calls in the shell's directory: use
 * it as `<prelude>; git "$@" status …`. It reads only program keys (what local commands may run); a key that cannot
 * be overridden ends the shell with status 97 before any git command runs. Quoting makes key names plain words.
 */
export const gitSafeShellPrelude = (binary = "git"): string => {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`
  const fixed = GIT_SAFE_OPTIONS.map(quote).join(" ")
  const query = ["config", "--name-only", "--get-regexp", whole(PROGRAM_KEYS)].map(quote).join(" ")
  return [
    `set -- ${fixed}`,
    "while IFS= read -r k; do",
    '  case "$k" in',
    "    '') ;;",
    "    *=*) exit 97 ;;",
    '    *.required) set -- "$@" -c "$k=false" ;;',
    '    *) set -- "$@" -c "$k=" ;;',
    "  esac",
    "done <<LATHE_GIT_KEYS",
    `$(${quote(binary)} ${fixed} ${query} 2>/dev/null)`,
    "LATHE_GIT_KEYS"
  ].join("\n")
}
