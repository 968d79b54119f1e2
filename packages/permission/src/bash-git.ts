/**
 * git as a code runner: configuration that names programs (`-c core.pager=…`, `--config-env`), subcommand options
 * and subcommands that run commands (`rebase --exec`, `submodule foreach`, `bisect run`, `fetch --upload-pack`),
 * and `git push` under other names (`send-pack`, `git-push`, `subtree push`). A subcommand that is not one of
 * git's own may be an alias, which runs anything: it is unknown.
 */

import type { ProgramContext } from "./bash-analysis.js"
import { type OptionGrammar, parseOptions, valuesOf } from "./bash-options.js"
import { type Arg, literal } from "./bash-word.js"

const GIT_VALUED = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path"])

/** Config keys whose values git runs as commands, or which point git at programs, hooks or more config. */
export const GIT_CODE_KEY =
  /^(alias\..*|core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|alternaterefscommand|worktree)|diff\.external|sequence\.editor|pager\..*|include\.path|includeif\..*|protocol\..*|remote\..*\.(uploadpack|receivepack|vcs|proxy)|uploadpack\.packobjectshook|credential\..*|gpg\..*|web\.browser|browser\..*|man\..*|instaweb\..*|sendemail\..*|submodule\..*\.update|init\.templatedir|receive\.procreceiverefs|.*\.(textconv|command|cmd|program|helper|tool|clean|smudge|process|editor|pager|path|driver|hook|exec|sshcommand))$/i

/** git without its global options, and the reason when a global option makes git run other code. */
export const stripGitGlobals = (argv: ReadonlyArray<Arg>): { argv: ReadonlyArray<Arg>; unknown?: string } => {
  let i = 1
  let unknown: string | undefined
  while (i < argv.length) {
    const arg = argv[i] as Arg
    if (arg.dynamic) return { argv, unknown: `git's global option ${arg.value} is computed at run time` }
    if (!arg.value.startsWith("-") || arg.value === "--") break
    const eq = arg.value.indexOf("=")
    const option = arg.value.startsWith("--") ? (eq < 0 ? arg.value : arg.value.slice(0, eq)) : arg.value.slice(0, 2)
    const attached = arg.value.startsWith("--") ? eq >= 0 : arg.value.length > 2
    const value = GIT_VALUED.has(option) ? (attached ? undefined : argv[i + 1]) : undefined
    if (option === "-c" || option === "--config-env") {
      const setting = attached ? arg.value.slice(option === "-c" ? 2 : option.length + 1) : (value?.value ?? "")
      if (value?.dynamic) unknown ??= `a git ${option} setting is computed at run time (${value.value})`
      else if (GIT_CODE_KEY.test(setting.split("=")[0] ?? ""))
        unknown ??= `git ${option} ${setting} makes git run a program`
    }
    if (option === "--exec-path" && (attached || value)) unknown ??= "git --exec-path changes which programs git runs"
    i += GIT_VALUED.has(option) && !attached ? 2 : 1
  }
  return { argv: [argv[0] as Arg, ...argv.slice(i)], ...(unknown ? { unknown } : {}) }
}

/** git's own commands (`git --list-cmds=main` of git 2.39 and later ones); anything else may be an alias. */
const GIT_COMMANDS = new Set(
  (
    "add am annotate apply archive backfill bisect blame branch bugreport bundle cat-file check-attr check-ignore " +
    "check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit " +
    "commit-graph commit-tree config count-objects credential credential-cache credential-store daemon describe " +
    "diagnose diff diff-files diff-index diff-pairs diff-tree difftool fast-export fast-import fetch fetch-pack " +
    "filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsck-objects fsmonitor--daemon gc " +
    "get-tar-commit-id gitk grep gui hash-object help hook http-backend http-fetch http-push imap-send index-pack " +
    "init init-db instaweb interpret-trailers last-modified log ls-files ls-remote ls-tree mailinfo mailsplit " +
    "maintenance merge merge-base merge-file merge-index merge-one-file merge-tree mergetool mktag mktree " +
    "multi-pack-index mv name-rev notes p4 pack-objects pack-redundant pack-refs patch-id prune prune-packed " +
    "pull push quiltimport range-diff read-tree rebase receive-pack reflog refs remote repack replace replay repo " +
    "request-pull rerere reset restore rev-list rev-parse revert rm send-email send-pack shortlog show " +
    "show-branch show-index show-ref sparse-checkout stage stash status stripspace submodule subtree svn switch " +
    "symbolic-ref tag unpack-file unpack-objects update-index update-ref update-server-info upload-archive " +
    "upload-pack var verify-commit verify-pack verify-tag version whatchanged worktree write-tree lfs"
  ).split(" ")
)

/** Subcommands that run commands Lathe does not see. */
const RUNS_UNSEEN: ReadonlyMap<string, string> = new Map([
  ["remote-ext", "git remote-ext runs the command in its URL"],
  ["instaweb", "git instaweb runs a web server and a browser"],
  ["web--browse", "git web--browse runs a browser program"],
  ["send-email", "git send-email runs --sendmail-cmd and hooks"]
])

/** Per subcommand: its options that take a value, and which of them are shell lines it runs. */
const SUB_OPTIONS: ReadonlyMap<string, { grammar: OptionGrammar; shell: ReadonlyArray<string> }> = new Map([
  [
    "rebase",
    {
      grammar: {
        valued: "xsX",
        long: ["--exec", "--onto", "--strategy", "--strategy-option"],
        permute: true,
        abbreviate: true
      },
      shell: ["-x", "--exec"]
    }
  ],
  [
    "difftool",
    {
      grammar: { valued: "xt", long: ["--extcmd", "--tool"], permute: true, abbreviate: true },
      shell: ["-x", "--extcmd"]
    }
  ],
  ["mergetool", { grammar: { valued: "t", long: ["--tool"], permute: true }, shell: [] }],
  ["fetch", { grammar: { long: ["--upload-pack"], permute: true, abbreviate: true }, shell: ["--upload-pack"] }],
  ["pull", { grammar: { long: ["--upload-pack"], permute: true, abbreviate: true }, shell: ["--upload-pack"] }],
  [
    "clone",
    {
      grammar: {
        valued: "ubojc",
        long: ["--upload-pack", "--template", "--config", "--origin", "--branch", "--depth"],
        permute: true,
        abbreviate: true
      },
      shell: ["-u", "--upload-pack"]
    }
  ],
  ["ls-remote", { grammar: { long: ["--upload-pack"], permute: true, abbreviate: true }, shell: ["--upload-pack"] }],
  ["fetch-pack", { grammar: { long: ["--upload-pack", "--exec"], permute: true }, shell: ["--upload-pack", "--exec"] }],
  [
    "archive",
    {
      grammar: {
        valued: "o",
        long: ["--exec", "--remote", "--output", "--prefix", "--format"],
        permute: true,
        abbreviate: true
      },
      shell: ["--exec"]
    }
  ],
  [
    "push",
    {
      grammar: {
        valued: "o",
        long: ["--receive-pack", "--exec", "--repo", "--push-option"],
        permute: true,
        abbreviate: true
      },
      shell: ["--receive-pack", "--exec"]
    }
  ],
  [
    "send-pack",
    { grammar: { long: ["--receive-pack", "--exec"], permute: true }, shell: ["--receive-pack", "--exec"] }
  ],
  [
    "grep",
    {
      grammar: { attached: "O", long: ["--open-files-in-pager"], permute: true },
      shell: ["-O", "--open-files-in-pager"]
    }
  ],
  [
    "filter-branch",
    {
      grammar: {
        long: [
          "--env-filter",
          "--tree-filter",
          "--index-filter",
          "--parent-filter",
          "--msg-filter",
          "--commit-filter",
          "--tag-name-filter",
          "--subdirectory-filter",
          "--prune-empty",
          "-d",
          "--original",
          "--state-branch"
        ],
        permute: true
      },
      shell: [
        "--env-filter",
        "--tree-filter",
        "--index-filter",
        "--parent-filter",
        "--msg-filter",
        "--commit-filter",
        "--tag-name-filter"
      ]
    }
  ]
])

const READS = /^(--get|--get-all|--get-regexp|--get-urlmatch|-l|--list|get|list|--show-origin|--name-only)$/

/**
 * Handles `git SUB …` (global options already stripped): runs what it runs through `context`, marks unknown what
 * cannot be known; returns whether the command itself is recorded.
 */
export const git = (argv: ReadonlyArray<Arg>, context: ProgramContext): boolean => {
  const sub = argv[1]
  if (!sub || sub.dynamic || sub.value.startsWith("-")) return true
  const name = sub.value
  const rest = argv.slice(2)
  const unseen = RUNS_UNSEEN.get(name)
  if (unseen) context.unknown(unseen)
  else if (!GIT_COMMANDS.has(name))
    context.unknown(`git ${name} is not a git command: it may be an alias, which runs anything`)
  const push = (words: ReadonlyArray<Arg>) => context.run([literal("git"), literal("push"), ...words])
  if (name === "send-pack" || name === "http-push") push(rest)
  if (name === "subtree" && rest.some((arg) => arg.value === "push")) push(rest.filter((arg) => arg.value !== "push"))
  const spec = SUB_OPTIONS.get(name)
  if (spec) {
    const parsed = parseOptions(rest, spec.grammar)
    if (parsed.unknown) context.unknown(`git ${name}: ${parsed.unknown}`)
    for (const value of valuesOf(parsed, spec.shell)) shellLine(context, `git ${name}`, value)
    if (name === "clone" && valuesOf(parsed, ["--template"]).length > 0)
      context.unknown("git clone --template copies hooks that git runs")
    for (const setting of valuesOf(parsed, ["-c", "--config"])) {
      if (GIT_CODE_KEY.test(setting.value.split("=")[0] ?? ""))
        context.unknown(`git clone -c ${setting.value} makes git run a program`)
    }
  }
  if (name === "submodule") {
    const at = rest.findIndex((arg) => arg.value === "foreach")
    if (at >= 0) {
      const words = rest
        .slice(at + 1)
        .filter(
          (arg, i, all) =>
            !/^(--recursive|-q|--quiet)$/.test(arg.value) || all.slice(0, i).some((a) => !a.value.startsWith("-"))
        )
      if (words.some((arg) => arg.dynamic)) context.unknown("git submodule foreach runs a command computed at run time")
      else context.line(words.map((arg) => arg.value).join(" "), true)
    }
  }
  if (name === "bisect" && rest[0]?.value === "run") context.run(rest.slice(1))
  if (name === "config") {
    const reading = rest.some((arg) => !arg.dynamic && READS.test(arg.value))
    const key = rest.find((arg) => !arg.dynamic && GIT_CODE_KEY.test(arg.value))
    if (rest.some((arg) => arg.dynamic) && !reading) context.unknown("git config sets a key computed at run time")
    else if (key && !reading) context.unknown(`git config sets ${key.value}, which makes git run a program later`)
  }
  return true
}

const shellLine = (context: ProgramContext, who: string, value: Arg) => {
  if (value.dynamic) context.unknown(`${who} runs a command computed at run time`)
  else context.line(value.value, true)
}
