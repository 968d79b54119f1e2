/**
 * Wrappers: programs that run another command given as their remaining words (`sudo`, `env`, `timeout`,
 * `setpriv`, `bwrap` …), each with its own option grammar, looked through repeatedly so rules see the command
 * that really runs. An option a wrapper's grammar does not list makes the line unknown: it could take the next
 * word as its value, and the command would start elsewhere.
 */
import { type OptionGrammar, parseOptions } from "./bash-options.js"
import { type Arg, hasBraces, literal } from "./bash-word.js"

/** One wrapper's grammar and what its options mean. */
interface Wrapper {
  readonly options: OptionGrammar
  /** Operands before the command: `timeout DURATION cmd`, `chroot DIR cmd`, `flock FILE cmd`. */
  readonly positional?: number
  /** `env NAME=VALUE cmd`: assignments before the command. */
  readonly assignments?: boolean
  /** Options whose value is a shell line the wrapper runs (`env -S`, `su -c`, `flock -c`). */
  readonly script?: ReadonlyArray<string>
  /** Options whose value is where the command runs (`env -C`, `sudo -D`). */
  readonly chdir?: ReadonlyArray<string>
  /** The command words are joined into one shell line (`watch 'a; b'`), unless one of these options is given. */
  readonly joined?: ReadonlyArray<string>
  /** Options after which no command runs (`command -v`, `taskset -p`). */
  readonly noCommand?: ReadonlyArray<string>
  /** A subcommand that must come first: `uv run cmd`, `bundle exec cmd`. Other subcommands are not wrappers. */
  readonly sub?: ReadonlyArray<string>
  /** Extra words after the options a shell reads as arguments (`su user args`): unknown when present. */
  readonly shellArgs?: boolean
  /** Options may also follow the positionals (`setarch ARCH -R cmd`). */
  readonly optionsAfter?: boolean
}

const w = (options: OptionGrammar, extra: Omit<Wrapper, "options"> = {}): Wrapper => ({
  options: { strict: true, ...options },
  ...extra
})

const HELP = ["--help", "--version"]
/** `uv run CMD`: any option before the command is unknown (these tools have many valued ones). */
const runs = (sub: string): Wrapper => w({ longFlags: HELP }, { sub: sub.split(" ") })

/** Every wrapper, by the basename it is run as. */
const WRAPPERS: ReadonlyMap<string, Wrapper> = new Map<string, Wrapper>([
  ["command", w({ flags: "pvV" }, { noCommand: ["-v", "-V"] })],
  ["builtin", w({})],
  ["exec", w({ valued: "a", flags: "cl" })],
  ["nohup", w({ longFlags: HELP })],
  ["coproc", w({})],
  [
    "time",
    w({
      valued: "fo",
      flags: "pvaq",
      long: ["--format", "--output"],
      longFlags: ["--portability", "--verbose", "--append", "--quiet", ...HELP]
    })
  ],
  [
    "env",
    w(
      {
        valued: "uCS",
        flags: "i0v",
        long: ["--unset", "--chdir", "--split-string"],
        longFlags: [
          "--ignore-environment",
          "--null",
          "--debug",
          "--block-signal",
          "--default-signal",
          "--ignore-signal",
          "--list-signal-handling",
          ...HELP
        ]
      },
      { assignments: true, script: ["-S", "--split-string"], chdir: ["-C", "--chdir"] }
    )
  ],
  [
    "sudo",
    w(
      {
        valued: "ugpCDrtTRU",
        flags: "AbBEeHhiKklnNPSsVv",
        long: [
          "--user",
          "--group",
          "--prompt",
          "--close-from",
          "--chdir",
          "--role",
          "--type",
          "--other-user",
          "--command-timeout",
          "--chroot",
          "--host"
        ],
        longFlags: [
          "--askpass",
          "--background",
          "--bell",
          "--preserve-env",
          "--edit",
          "--set-home",
          "--login",
          "--remove-timestamp",
          "--reset-timestamp",
          "--list",
          "--non-interactive",
          "--preserve-groups",
          "--stdin",
          "--shell",
          "--validate",
          ...HELP
        ]
      },
      {
        assignments: true,
        chdir: ["-D", "--chdir"],
        noCommand: ["-e", "--edit", "-l", "--list", "-v", "--validate", "-k", "-K"]
      }
    )
  ],
  ["doas", w({ valued: "uC", flags: "nsL" })],
  [
    "timeout",
    w(
      {
        valued: "sk",
        flags: "v",
        long: ["--signal", "--kill-after"],
        longFlags: ["--preserve-status", "--foreground", "--verbose", ...HELP]
      },
      { positional: 1 }
    )
  ],
  ["nice", w({ valued: "n", long: ["--adjustment"], longFlags: HELP, numeric: true })],
  [
    "ionice",
    w(
      {
        valued: "cnpPu",
        flags: "t",
        long: ["--class", "--classdata", "--pid", "--pgid", "--uid"],
        longFlags: ["--ignore", ...HELP]
      },
      { noCommand: ["-p", "--pid", "-P", "--pgid", "-u", "--uid"] }
    )
  ],
  ["stdbuf", w({ valued: "ioe", long: ["--input", "--output", "--error"], longFlags: HELP })],
  ["setsid", w({ flags: "cfw", longFlags: ["--ctty", "--fork", "--wait", ...HELP] })],
  ["chroot", w({ long: ["--userspec", "--groups"], longFlags: ["--skip-chdir", ...HELP] }, { positional: 1 })],
  [
    "watch",
    w(
      {
        valued: "nqd",
        flags: "bceghprtxwC",
        long: ["--interval", "--equexit", "--differences"],
        longFlags: [
          "--beep",
          "--color",
          "--no-color",
          "--errexit",
          "--exec",
          "--chgexit",
          "--no-title",
          "--no-wrap",
          "--precise",
          "--no-rerun",
          ...HELP
        ]
      },
      { joined: ["-x", "--exec"] }
    )
  ],
  [
    "taskset",
    w(
      { flags: "acp", longFlags: ["--all-tasks", "--cpu-list", "--pid", ...HELP] },
      { positional: 1, noCommand: ["-p", "--pid"] }
    )
  ],
  [
    "chrt",
    w(
      {
        valued: "TPD",
        flags: "bdfiormpaRv",
        long: ["--sched-runtime", "--sched-period", "--sched-deadline"],
        longFlags: [
          "--batch",
          "--deadline",
          "--fifo",
          "--idle",
          "--other",
          "--rr",
          "--reset-on-fork",
          "--all-tasks",
          "--max",
          "--pid",
          "--verbose",
          ...HELP
        ]
      },
      { positional: 1, noCommand: ["-p", "--pid", "-m", "--max"] }
    )
  ],
  ["unbuffer", w({ flags: "p" })],
  ["busybox", w({})],
  ["toybox", w({})],
  [
    "flock",
    w(
      {
        valued: "wE",
        flags: "sexunoFv",
        long: ["--wait", "--timeout", "--conflict-exit-code"],
        longFlags: [
          "--shared",
          "--exclusive",
          "--unlock",
          "--nonblock",
          "--nb",
          "--close",
          "--no-fork",
          "--verbose",
          ...HELP
        ]
      },
      { positional: 1 }
    )
  ],
  [
    "unshare",
    w(
      {
        valued: "SGRw",
        attached: "muinpUCT",
        flags: "frcl",
        long: [
          "--setuid",
          "--setgid",
          "--root",
          "--wd",
          "--propagation",
          "--setgroups",
          "--map-user",
          "--map-group",
          "--map-users",
          "--map-groups",
          "--load-interp"
        ],
        longFlags: [
          "--mount",
          "--uts",
          "--ipc",
          "--net",
          "--pid",
          "--user",
          "--cgroup",
          "--time",
          "--fork",
          "--map-root-user",
          "--map-current-user",
          "--map-auto",
          "--keep-caps",
          "--mount-proc",
          "--kill-child",
          "--monotonic",
          "--boottime",
          "--mount-binfmt",
          ...HELP
        ]
      },
      { chdir: ["-w", "--wd"] }
    )
  ],
  [
    "nsenter",
    w({
      valued: "tSG",
      attached: "muinpUCTrw",
      flags: "aFZe",
      long: ["--target", "--setuid", "--setgid"],
      longFlags: [
        "--all",
        "--mount",
        "--uts",
        "--ipc",
        "--net",
        "--pid",
        "--user",
        "--cgroup",
        "--time",
        "--root",
        "--wd",
        "--preserve-credentials",
        "--no-fork",
        "--follow-context",
        "--env",
        ...HELP
      ]
    })
  ],
  [
    "systemd-run",
    w(
      {
        valued: "pEuMHr",
        flags: "qGSdtP",
        long: [
          "--unit",
          "--property",
          "--description",
          "--slice",
          "--uid",
          "--gid",
          "--nice",
          "--working-directory",
          "--setenv",
          "--service-type",
          "--on-active",
          "--on-boot",
          "--on-startup",
          "--on-unit-active",
          "--on-unit-inactive",
          "--on-calendar",
          "--timer-property",
          "--path-property",
          "--socket-property",
          "--machine",
          "--host",
          "--shell"
        ],
        longFlags: [
          "--user",
          "--system",
          "--scope",
          "--pty",
          "--pipe",
          "--wait",
          "--collect",
          "--quiet",
          "--same-dir",
          "--remain-after-exit",
          "--send-sighup",
          "--no-block",
          "--no-ask-password",
          ...HELP
        ]
      },
      { chdir: ["--working-directory"] }
    )
  ],
  [
    "setpriv",
    w(
      {
        flags: "d",
        long: [
          "--reuid",
          "--regid",
          "--ruid",
          "--euid",
          "--rgid",
          "--egid",
          "--groups",
          "--inh-caps",
          "--ambient-caps",
          "--bounding-set",
          "--securebits",
          "--pdeathsig",
          "--selinux-label",
          "--apparmor-profile",
          "--landlock-access",
          "--landlock-rule"
        ],
        longFlags: [
          "--clear-groups",
          "--keep-groups",
          "--init-groups",
          "--no-new-privs",
          "--nnp",
          "--reset-env",
          "--dump",
          ...HELP
        ]
      },
      { noCommand: ["-d", "--dump"] }
    )
  ],
  [
    "prlimit",
    w(
      {
        valued: "po",
        attached: "cdefilmnqrstuvxy",
        flags: "V",
        long: ["--pid", "--output"],
        longFlags: [
          "--as",
          "--core",
          "--cpu",
          "--data",
          "--fsize",
          "--locks",
          "--memlock",
          "--msgqueue",
          "--nice",
          "--nofile",
          "--nproc",
          "--rss",
          "--rtprio",
          "--rttime",
          "--sigpending",
          "--stack",
          "--noheadings",
          "--raw",
          "--verbose",
          ...HELP
        ]
      },
      { noCommand: ["-p", "--pid"] }
    )
  ],
  [
    "fakeroot",
    w({ valued: "lsib", flags: "uv", long: ["--lib", "--faked"], longFlags: ["--unknown-is-real", ...HELP] })
  ],
  [
    "fakechroot",
    w({
      valued: "lsc",
      flags: "e",
      long: ["--lib", "--config-dir", "--environment"],
      longFlags: ["--use-system-libs", ...HELP]
    })
  ],
  [
    "strace",
    w(
      {
        valued: "abeEIoOpPsSuUX",
        flags: "cCdDfFhiknqrtTvVwxyzZ",
        long: [
          "--trace",
          "--signal",
          "--status",
          "--output",
          "--attach",
          "--user",
          "--env",
          "--string-limit",
          "--columns",
          "--summary-sort-by",
          "--trace-path",
          "--decode-fds",
          "--quiet",
          "--seccomp-bpf",
          "--const-print-style",
          "--absolute-timestamps",
          "--timestamps",
          "--syscall-limit",
          "--abbrev",
          "--verbose",
          "--raw",
          "--read",
          "--write",
          "--inject",
          "--fault",
          "--kvm",
          "--decode-pids",
          "--secontext",
          "--stack-traces",
          "--silence",
          "--failed-only",
          "--successful-only"
        ],
        longFlags: [
          "--follow-forks",
          "--output-separately",
          "--summary-only",
          "--summary",
          "--summary-wall-clock",
          "--no-abbrev",
          "--debug",
          "--instruction-pointer",
          "--relative-timestamps",
          "--syscall-times",
          "--daemonize",
          ...HELP
        ]
      },
      { noCommand: ["-p", "--attach"] }
    )
  ],
  [
    "ltrace",
    w(
      {
        valued: "aAeEDFlnopsuwx",
        flags: "bcCfhiLrStTV",
        long: ["--align", "--output", "--library", "--indent", "--config"],
        longFlags: ["--demangle", ...HELP]
      },
      { noCommand: ["-p"] }
    )
  ],
  [
    "runuser",
    w(
      {
        valued: "ugGcsw",
        flags: "lmpfP",
        long: [
          "--user",
          "--group",
          "--supp-group",
          "--command",
          "--session-command",
          "--shell",
          "--whitelist-environment"
        ],
        longFlags: ["--login", "--preserve-environment", "--pty", "--fast", ...HELP],
        permute: true
      },
      { script: ["-c", "--command", "--session-command"], shellArgs: true }
    )
  ],
  [
    "su",
    w(
      {
        valued: "gGcsw",
        flags: "lmpfP",
        long: ["--group", "--supp-group", "--command", "--session-command", "--shell", "--whitelist-environment"],
        longFlags: ["--login", "--preserve-environment", "--pty", "--fast", ...HELP],
        permute: true
      },
      { script: ["-c", "--command", "--session-command"], shellArgs: true }
    )
  ],
  [
    "bwrap",
    w({
      long: [
        "--dir",
        "--tmpfs",
        "--proc",
        "--dev",
        "--mqueue",
        "--remount-ro",
        "--chdir",
        "--unsetenv",
        "--uid",
        "--gid",
        "--hostname",
        "--args",
        "--seccomp",
        "--add-seccomp-fd",
        "--lock-file",
        "--sync-fd",
        "--info-fd",
        "--json-status-fd",
        "--block-fd",
        "--userns-block-fd",
        "--userns",
        "--userns2",
        "--pidns",
        "--cap-add",
        "--cap-drop",
        "--exec-label",
        "--file-label",
        "--perms",
        "--size",
        "--argv0",
        "--overlay-src",
        "--tmp-overlay",
        "--ro-overlay"
      ],
      long2: [
        "--bind",
        "--ro-bind",
        "--dev-bind",
        "--bind-try",
        "--ro-bind-try",
        "--dev-bind-try",
        "--symlink",
        "--setenv",
        "--chmod",
        "--file",
        "--bind-data",
        "--ro-bind-data",
        "--bind-fd",
        "--ro-bind-fd",
        "--overlay"
      ],
      longFlags: [
        "--unshare-all",
        "--share-net",
        "--unshare-user",
        "--unshare-user-try",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup",
        "--unshare-cgroup-try",
        "--clearenv",
        "--new-session",
        "--die-with-parent",
        "--as-pid-1",
        "--disable-userns",
        "--assert-userns-disabled",
        "--level-prefix",
        ...HELP
      ]
    })
  ],
  [
    "numactl",
    w(
      {
        valued: "imNCpPwb",
        flags: "lsHa",
        long: [
          "--interleave",
          "--membind",
          "--cpunodebind",
          "--physcpubind",
          "--preferred",
          "--preferred-many",
          "--weighted-interleave",
          "--cpubind"
        ],
        longFlags: [
          "--localalloc",
          "--show",
          "--hardware",
          "--all",
          "--balancing",
          "--touch",
          "--strict",
          "--shmmode",
          ...HELP
        ]
      },
      { noCommand: ["-s", "--show", "-H", "--hardware"] }
    )
  ],
  // firejail takes every option as `--name` or `--name=value`: none takes the next word.
  ["firejail", w({ permute: false, strict: false })],
  ["valgrind", w({ flags: "qvh", permute: false, strict: false })],
  ["sg", w({}, { positional: 1, joined: [] })],
  ["pkexec", w({ long: ["--user"], longFlags: ["--disable-internal-agent", "--keep-cwd", ...HELP] })],
  ["eatmydata", w({})],
  ["nocache", w({ valued: "nD" })],
  ["chronic", w({ flags: "ve" })],
  ["ifne", w({ flags: "n" })],
  ["catchsegv", w({})],
  [
    "torsocks",
    w({
      valued: "uPa",
      flags: "iqd",
      long: ["--user", "--pass", "--address", "--port"],
      longFlags: ["--isolate", "--quiet", "--debug", "--shell", ...HELP]
    })
  ],
  ["proxychains", w({ valued: "f", flags: "q" })],
  ["proxychains4", w({ valued: "f", flags: "q" })],
  ["faketime", w({ valued: "m", flags: "f", longFlags: ["--exclude-monotonic", ...HELP] }, { positional: 1 })],
  ["dbus-run-session", w({ long: ["--config-file", "--dbus-daemon"], longFlags: HELP })],
  [
    "xvfb-run",
    w({
      valued: "npsfe",
      flags: "ahw",
      long: ["--server-num", "--xauth-protocol", "--server-args", "--auth-file", "--error-file", "--wait"],
      longFlags: ["--auto-servernum", "--help"]
    })
  ],
  ["ssh-agent", w({ valued: "aEPt", flags: "cDds" })],
  [
    "setarch",
    w(
      {
        flags: "vRFZLXBIST3",
        longFlags: [
          "--verbose",
          "--addr-no-randomize",
          "--fdpic-funcptrs",
          "--mmap-page-zero",
          "--addr-compat-layout",
          "--read-implies-exec",
          "--32bit",
          "--short-inode",
          "--whole-seconds",
          "--sticky-timeouts",
          "--3gb",
          "--4gb",
          "--uname-2.6",
          "--list",
          ...HELP
        ]
      },
      { positional: 1, optionsAfter: true }
    )
  ],
  ["linux32", w({ flags: "vRFZLXBIST3" })],
  ["linux64", w({ flags: "vRFZLXBIST3" })],
  ["cgexec", w({ valued: "g", longFlags: ["--sticky"] })],
  ["rlwrap", w({ valued: "aAbcCDefFgHIlmMnNoOpPqrRsStTvwWz", permute: false, strict: false })],
  [
    "npx",
    w(
      {
        valued: "pc",
        flags: "yq",
        long: ["--package", "--call", "--prefix", "--registry", "--cache"],
        longFlags: ["--yes", "--no", "--no-install", "--ignore-existing", "--quiet", "--shell-auto-fallback", ...HELP]
      },
      { script: ["-c", "--call"] }
    )
  ],
  ["pnpx", w({ valued: "p", long: ["--package"] })],
  ["bunx", w({ valued: "p", long: ["--package"], longFlags: ["--bun", ...HELP] })],
  ["uv", runs("run tool")],
  ["uvx", w({ valued: "p", long: ["--from", "--with", "--python"], longFlags: HELP })],
  ["poetry", runs("run")],
  ["pipenv", runs("run")],
  ["pdm", runs("run")],
  ["hatch", runs("run")],
  ["rye", runs("run")],
  ["bundle", runs("exec")],
  ["direnv", w({}, { sub: ["exec"], positional: 1 })],
  [
    "conda",
    w(
      {
        valued: "np",
        long: ["--name", "--prefix", "--cwd"],
        longFlags: ["--no-capture-output", "--live-stream", ...HELP]
      },
      { sub: ["run"] }
    )
  ],
  [
    "mamba",
    w(
      {
        valued: "np",
        long: ["--name", "--prefix", "--cwd"],
        longFlags: ["--no-capture-output", "--live-stream", ...HELP]
      },
      { sub: ["run"] }
    )
  ],
  [
    "nix-shell",
    w(
      {
        permute: true,
        strict: false,
        long: ["--run", "--command", "-p", "--packages", "-I", "--arg", "--argstr", "--attr", "-A"]
      },
      { script: ["--run", "--command"] }
    )
  ],
  [
    "xargs",
    w({
      valued: "ILlnPdEesa",
      attached: "i",
      flags: "0prtxo",
      long: [
        "--max-args",
        "--max-procs",
        "--delimiter",
        "--arg-file",
        "--max-lines",
        "--max-chars",
        "--eof",
        "--replace",
        "--process-slot-var"
      ],
      longFlags: [
        "--null",
        "--interactive",
        "--no-run-if-empty",
        "--verbose",
        "--exit",
        "--open-tty",
        "--show-limits",
        ...HELP
      ]
    })
  ]
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
  /** Why the wrapped command cannot be known statically (an option a wrapper's grammar lacks …). */
  readonly unknown?: string
}

/** A program path's last component: `/usr/bin/rm` → `rm`. */
export const basename = (path: string): string => path.slice(path.lastIndexOf("/") + 1)

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/

/** The wrapper a command word names, if it is one. */
export const wrapperOf = (head: Arg | undefined): Wrapper | undefined =>
  head && !head.dynamic && !head.glob && !hasBraces(head) ? WRAPPERS.get(basename(head.value)) : undefined

/**
 * Strips wrappers and their options from the front of `argv`, repeatedly (`sudo env X=1 timeout 5 rm x` is
 * `rm x`). `command -v` only looks a name up and stays as it is.
 */
export const unwrap = (input: ReadonlyArray<Arg>): Unwrapped => {
  let rest = input
  let chdir: Arg | undefined
  let openEnded = false
  let replace: string | undefined
  let unknown: string | undefined
  const assigned: Array<string> = []
  const done = (argv: ReadonlyArray<Arg>, script?: ReadonlyArray<Arg>): Unwrapped => ({
    argv,
    ...(script ? { script } : {}),
    ...(chdir ? { chdir } : {}),
    ...(openEnded ? { openEnded } : {}),
    ...(replace !== undefined ? { replace } : {}),
    assigned,
    ...(unknown ? { unknown } : {})
  })
  for (;;) {
    const head = rest[0]
    const spec = wrapperOf(head)
    if (!head || !spec) break
    const name = basename(head.value)
    let words = rest.slice(1)
    if (spec.sub) {
      if (!words[0] || words[0].dynamic || !spec.sub.includes(words[0].value)) break
      words = words.slice(1)
    }
    if (name === "env" || name === "su") words = words.filter((arg) => arg.dynamic || arg.value !== "-")
    const parsed = parseOptions(words, spec.options)
    if (parsed.unknown) unknown ??= `${name}: ${parsed.unknown}`
    const given = (names: ReadonlyArray<string> | undefined) =>
      parsed.options.filter((option) => names?.includes(option.name))
    if (given(spec.noCommand).length > 0) break
    const dir = given(spec.chdir).at(-1)?.value
    if (dir) chdir = dir
    if (name === "xargs") {
      const replaced = parsed.options.find((option) => ["-I", "-i", "--replace"].includes(option.name))
      if (replaced) replace = replaced.value?.value || "{}"
      if (replaced?.name === "-I" && !replaced.value) unknown ??= "xargs -I has no replacement text"
    }
    let operands = parsed.operands
    // Assignments (`env X=1`), then positionals (`timeout 5`), then the command.
    if (spec.assignments) {
      while (operands[0] && !operands[0].dynamic && ASSIGNMENT.test(operands[0].value)) {
        assigned.push(operands[0].value)
        operands = operands.slice(1)
      }
    }
    operands = operands.slice(spec.positional ?? 0)
    if (spec.optionsAfter) {
      const again = parseOptions(operands, spec.options)
      if (again.unknown) unknown ??= `${name}: ${again.unknown}`
      operands = again.operands
    }
    const script = given(spec.script).at(-1)?.value
    if (script) return done([], [script, ...operands])
    if (name === "flock" && (operands[0]?.value === "-c" || operands[0]?.value === "--command")) {
      return done([], operands.slice(1, 2))
    }
    if (spec.shellArgs && given(["-u", "--user"]).length === 0) {
      // `su [user] [args]`: the args go to the user's shell, as its own arguments (`-c 'rm x'`).
      if (operands.length > 1) unknown ??= `${name} passes words after the user name to a shell`
      break
    }
    if (spec.joined && given(spec.joined).length === 0 && operands.length > 0) return done([], operands)
    if (name === "xargs") {
      openEnded = replace === undefined
      rest = operands.length > 0 ? operands : [literal("echo")]
      continue
    }
    if (operands.length === 0) break
    rest = operands
  }
  // A wrapper was looked through, yet what follows reads as an option: the grammar missed how it is used.
  if (rest !== input && rest[0] && !rest[0].dynamic && rest[0].value.startsWith("-")) {
    unknown ??= `a wrapper is followed by ${rest[0].value}, which Lathe cannot place`
  }
  return done(rest)
}
