/**
 * The one reviewed table of ways a command line can run text as code: interpreters, programs with options or
 * commands that run other commands, environment variables that name code, and the programs whose standard input
 * is only ever data. The handlers in `bash-programs.ts` read it; a change of what Lathe knows is a change here.
 *
 * The rule, under deny rules: each form is unknown (a person decides) unless its code is a static shell string,
 * which is then analysed like the rest of the line. Code in another language is always unknown.
 */
import type { OptionGrammar } from "./bash-options.js"

/** What a program does with its standard input when it is a here-document, a here-string or a pipe. */
export type StdinUse =
  /** Only data: a here-document fed to it is fine. */
  | "data"
  /** Code, whatever its arguments say (`ed`, `gdb`, `at`). */
  | "code"
  /** Code when no script is named (an interpreter with no script, or `-`, or `/dev/stdin`). */
  | "script"

/** Special checks the table cannot express as data; implemented in `bash-programs.ts`. */
export type Special =
  | "shell"
  | "eval"
  | "source"
  | "trap"
  | "alias"
  | "awk"
  | "sed"
  | "find"
  | "parallel"
  | "git"
  | "ssh"
  | "tar"
  | "perl"
  | "php"
  | "deno"
  | "npm"
  | "sqlite"
  | "socat"
  | "tmux"
  | "builtin"

/** One program that can run text as code. */
export interface CodeRunner {
  /** Why it is in the table, for the reviewer. */
  readonly why: string
  /** Its option grammar (see `bash-options.ts`). */
  readonly options: OptionGrammar
  /** Options whose value is code in the program's own language: always unknown (Lathe only reads shell). */
  readonly code?: ReadonlyArray<string>
  /** Options whose value is a shell command line: analysed when static, unknown when not. */
  readonly shell?: ReadonlyArray<string>
  /** Options whose value names a file of code: unknown when that is the standard input or a `data:` URL. */
  readonly codeFile?: ReadonlyArray<string>
  /** The first operand is a script file (its code is the project's: not read, see the limit in the README). */
  readonly script?: boolean
  /** What its standard input is; absent: a here-document fed to it is unknown, a pipe is data. */
  readonly stdin?: StdinUse
  /** Options that make it read code from its standard input even with a script (`python -i`). */
  readonly interactive?: ReadonlyArray<string>
  /** Options that only print (`--version`): nothing runs. */
  readonly inert?: ReadonlyArray<string>
  /** A check in code for what the table cannot say. */
  readonly special?: Special
}

const VERSION = ["--version", "-V", "--help", "-h"]

const py: CodeRunner = {
  why: "python: -c CODE, a script path on stdin (-, /dev/stdin), -i reads stdin after the script; -m runs a module",
  options: { valued: "cWXm", flags: "bBdEhiIOPqsSuvVxR", long: ["--check-hash-based-pycs"], last: ["-c", "-m"] },
  code: ["-c"],
  script: true,
  stdin: "script",
  interactive: ["-i"],
  inert: VERSION
}

const node: CodeRunner = {
  why: "node: -e/-p CODE, --import/--require/--loader of a data: URL or stdin, a script on stdin, -i",
  options: {
    valued: "erpC",
    flags: "chiv",
    long: [
      "--eval",
      "--print",
      "--require",
      "--import",
      "--loader",
      "--experimental-loader",
      "--conditions",
      "--input-type",
      "--env-file",
      "--title",
      "--disable-warning",
      "--watch-path"
    ],
    last: ["-e", "-p", "--eval", "--print"]
  },
  code: ["-e", "-p", "--eval", "--print"],
  codeFile: ["-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file"],
  script: true,
  stdin: "script",
  interactive: ["-i", "--interactive"],
  inert: ["--version", "-v", "--help", "-h"]
}

const sh: CodeRunner = {
  why: "shells: -c LINE is analysed, a script file is not read, commands on stdin are analysed when static",
  options: {},
  stdin: "script",
  special: "shell"
}

const vim: CodeRunner = {
  why: "vim family: -c/+/--cmd run Ex commands (`!rm x`), -S/-u source files, -s reads keys, -es reads Ex from stdin",
  options: { valued: "cSusTtqrwWiU", long: ["--cmd", "-S"], plus: true, permute: true },
  code: ["-c", "--cmd", "+"],
  codeFile: ["-S", "-u", "-s", "-U", "-w", "-W"],
  stdin: "code",
  inert: ["--version", "-h", "--help"]
}

/** Every program that runs text as code, by the name it is run as (its basename). */
export const CODE_RUNNERS: ReadonlyMap<string, CodeRunner> = new Map<string, CodeRunner>([
  // Shells and the shell's own code runners.
  ...["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "posh", "tcsh", "csh", "rbash", "ksh93"].map(
    (name) => [name, sh] as const
  ),
  ["eval", { why: "runs its words as a shell line", options: {}, special: "eval" }],
  ["source", { why: "runs a file of shell code, which Lathe does not read", options: {}, special: "source" }],
  [".", { why: "runs a file of shell code, which Lathe does not read", options: {}, special: "source" }],
  ["trap", { why: "sets a shell line to run on a signal or at exit", options: {}, special: "trap" }],
  ["alias", { why: "defines a command as a shell line", options: {}, special: "alias" }],
  // Builtins that evaluate or rebind names (see bash-builtins.ts).
  ...["hash", "mapfile", "readarray", "compgen", "complete", "enable", "fc", "test", "[", "let", "printf", "read"].map(
    (name) =>
      [
        name,
        { why: "a builtin that evaluates or rebinds names", options: {}, stdin: "data", special: "builtin" }
      ] as const
  ),
  // Interpreters.
  ["python", py],
  ["pypy", py],
  ["node", node],
  ["nodejs", node],
  [
    "bun",
    {
      why: "bun: -e/-p CODE, `bun run -` reads stdin",
      options: { valued: "epr", long: ["--eval", "--print", "--preload", "--cwd"], last: ["-e", "-p"] },
      code: ["-e", "-p", "--eval", "--print"],
      codeFile: ["-r", "--preload"],
      stdin: "script",
      inert: VERSION
    }
  ],
  [
    "deno",
    {
      why: "deno: `deno eval CODE`, `deno run -`/data: URLs; operands after the subcommand",
      options: { valued: "", permute: true },
      script: true,
      stdin: "script",
      special: "deno",
      inert: VERSION
    }
  ],
  [
    "perl",
    {
      why: "perl: -e/-E CODE, -M/-m 'code', -x, a script on stdin; -n/-p loops run -e code",
      options: { valued: "eEIMm", attached: "0dDilCFx", flags: "aBcfhnpsStTuUvwWX", last: [] },
      code: ["-e", "-E"],
      script: true,
      stdin: "script",
      inert: ["-v", "-V", "--version", "-h", "--help"],
      special: "perl"
    }
  ],
  [
    "ruby",
    {
      why: "ruby: -e CODE, -r lib, a script on stdin",
      options: { valued: "erICEFK", attached: "0ilWTx", flags: "acdhnpsSvwyU", long: ["--encoding", "--require"] },
      code: ["-e"],
      script: true,
      stdin: "script",
      inert: ["-v", "--version", "-h", "--help"]
    }
  ],
  ["irb", { why: "irb: reads Ruby from stdin", options: {}, stdin: "code", inert: VERSION }],
  [
    "php",
    {
      why: "php: -r/-B/-R/-F/-E CODE, -d auto_prepend_file=, -a interactive, a script on stdin",
      options: { valued: "rBRFEdfcztS", flags: "ahHilmnqsvew", last: ["-r"] },
      code: ["-r", "-B", "-R", "-E", "-F"],
      codeFile: ["-f"],
      script: true,
      stdin: "script",
      interactive: ["-a"],
      inert: ["-v", "--version", "-h", "-m", "-i"],
      special: "php"
    }
  ],
  ...["lua", "luajit", "lua5.1", "lua5.2", "lua5.3", "lua5.4", "texlua"].map(
    (name) =>
      [
        name,
        {
          why: "lua: -e CODE, -l module, a script on stdin, -i",
          options: { valued: "el", flags: "ivEW" },
          code: ["-e"],
          script: true,
          stdin: "script",
          interactive: ["-i"],
          inert: ["-v"]
        }
      ] as const
  ),
  ...["tclsh", "wish", "jimsh"].map(
    (name) =>
      [
        name,
        {
          why: "Tcl: a script file, or Tcl read from stdin (`exec rm x`)",
          options: { valued: "", long: ["-encoding"] },
          script: true,
          stdin: "script"
        }
      ] as const
  ),
  [
    "expect",
    {
      why: "expect: -c CMDS, -f file, Tcl read from stdin",
      options: { valued: "cfD", flags: "bdiNnv", last: ["-f"] },
      code: ["-c"],
      codeFile: ["-f"],
      script: true,
      stdin: "script",
      interactive: ["-i"]
    }
  ],
  ...["Rscript", "R"].map(
    (name) =>
      [
        name,
        {
          why: "R: -e EXPR, --file=, code on stdin (`R --no-save < f`)",
          options: { valued: "ef", long: ["--file", "--default-packages"] },
          code: ["-e"],
          codeFile: ["-f", "--file"],
          script: name === "Rscript",
          stdin: name === "Rscript" ? "script" : "code",
          inert: ["--version", "--help"]
        }
      ] as const
  ),
  [
    "julia",
    {
      why: "julia: -e/-E CODE, -L file, a script on stdin",
      options: { valued: "eELJCOpt", long: ["--eval", "--print", "--load", "--project"] },
      code: ["-e", "-E", "--eval", "--print"],
      codeFile: ["-L", "--load"],
      script: true,
      stdin: "script",
      inert: VERSION
    }
  ],
  [
    "osascript",
    {
      why: "osascript: -e CODE",
      options: { valued: "elis" },
      code: ["-e"],
      script: true,
      stdin: "script"
    }
  ],
  [
    "awk",
    { why: "awk: its program runs system(), pipes, getline and writes", options: {}, stdin: "data", special: "awk" }
  ],
  ...["gawk", "mawk", "nawk", "busybox-awk"].map(
    (name) => [name, { why: "awk variants", options: {}, stdin: "data", special: "awk" }] as const
  ),
  ["dc", { why: "dc: `!` runs a shell command", options: { valued: "ef" }, code: ["-e"], stdin: "code" }],
  ["ed", { why: "ed: reads commands (`!rm x`) from stdin", options: {}, stdin: "code", inert: VERSION }],
  ["red", { why: "ed's restricted form still reads commands from stdin", options: {}, stdin: "code" }],
  ...["sqlite3", "sqlite"].map(
    (name) =>
      [
        name,
        {
          why: "sqlite3: SQL and dot-commands (`.shell`, `.system`) after the database, -cmd, stdin",
          options: { long: ["-cmd", "-init", "-separator", "-nullvalue", "-newline"], permute: true },
          code: ["-cmd"],
          codeFile: ["-init"],
          stdin: "code",
          special: "sqlite"
        }
      ] as const
  ),
  [
    "psql",
    {
      why: "psql: -c SQL and \\! run shell commands, -f file, stdin",
      options: { valued: "cfdhpUvPoTLFRz", long: ["--command", "--file", "--set", "--variable"], permute: true },
      code: ["-c", "--command"],
      codeFile: ["-f", "--file"],
      stdin: "code",
      inert: VERSION
    }
  ],
  [
    "mysql",
    {
      why: "mysql: -e SQL and `system` run shell commands, stdin",
      options: { valued: "eDhPuSp", long: ["--execute", "--init-command"], permute: true },
      code: ["-e", "--execute", "--init-command"],
      stdin: "code",
      inert: VERSION
    }
  ],
  ...["emacs", "emacsclient"].map(
    (name) =>
      [
        name,
        {
          why: "emacs: --eval/-f run Lisp (`(shell-command …)`), -l loads a file",
          options: {
            valued: "lfL",
            long: ["--eval", "-eval", "--execute", "--load", "-l", "--funcall", "-f"],
            permute: true
          },
          code: ["--eval", "-eval", "--execute", "-f", "--funcall", "-e"],
          codeFile: ["-l", "--load"]
        }
      ] as const
  ),
  ...["vim", "vi", "nvim", "ex", "view", "gvim", "rvim", "vimdiff", "gview"].map((name) => [name, vim] as const),
  // Programs whose options or commands run other commands.
  [
    "sed",
    {
      why: "sed: the `e` command and the `s///e` flag run shell commands; -f reads a script",
      options: {},
      stdin: "data",
      special: "sed"
    }
  ],
  ["find", { why: "find: -exec/-execdir/-ok run commands; -delete, -fprint write", options: {}, special: "find" }],
  ...["parallel", "sem"].map(
    (name) =>
      [name, { why: "GNU parallel runs its command words through a shell", options: {}, special: "parallel" }] as const
  ),
  [
    "rsync",
    {
      why: "rsync: -e/--rsh and --rsync-path run commands",
      options: {
        valued: "efT",
        long: [
          "--rsh",
          "--rsync-path",
          "--filter",
          "--exclude",
          "--include",
          "--exclude-from",
          "--include-from",
          "--files-from"
        ],
        permute: true,
        abbreviate: true
      },
      shell: ["-e", "--rsh", "--rsync-path"]
    }
  ],
  ...["ssh", "scp", "sftp", "autossh"].map(
    (name) =>
      [
        name,
        {
          why: "ssh: -o ProxyCommand=/LocalCommand=/KnownHostsCommand= run commands; scp/sftp -S names the ssh program",
          options: { valued: "BbcDEeFIiJLlmOopQRSWw", permute: name !== "ssh" },
          shell: name === "ssh" ? [] : ["-S"],
          codeFile: ["-F"],
          special: "ssh"
        }
      ] as const
  ),
  [
    "tar",
    {
      why: "tar: --to-command, --checkpoint-action=exec=, -I/--use-compress-program, --rsh-command, -F/--info-script",
      options: {
        valued: "fCIFTXbgKLNVH",
        long: [
          "--to-command",
          "--checkpoint-action",
          "--use-compress-program",
          "--rsh-command",
          "--info-script",
          "--new-volume-script",
          "--rmt-command",
          "--file",
          "--directory",
          "--files-from",
          "--exclude-from",
          "--exclude"
        ],
        permute: true,
        abbreviate: true
      },
      shell: [
        "--to-command",
        "-I",
        "--use-compress-program",
        "--rsh-command",
        "-F",
        "--info-script",
        "--new-volume-script",
        "--rmt-command"
      ],
      stdin: "data",
      special: "tar"
    }
  ],
  [
    "zip",
    {
      why: "zip: -TT/--unzip-command runs a command to test the archive",
      options: {
        valued: "bnPtxiZ",
        long: ["-TT", "--unzip-command", "--tt", "--tt2", "--exclude", "--include"],
        permute: true
      },
      shell: ["-TT", "--unzip-command"]
    }
  ],
  ...["make", "gmake", "remake"].map(
    (name) =>
      [
        name,
        {
          why: "make: --eval/-E run make code ($(shell …)); -f names the makefile (stdin: unknown)",
          options: {
            valued: "CEfIjlOoW",
            long: [
              "--eval",
              "--file",
              "--makefile",
              "--directory",
              "--include-dir",
              "--jobs",
              "--load-average",
              "--old-file",
              "--what-if",
              "--assume-new",
              "--assume-old",
              "--new-file"
            ],
            permute: true,
            abbreviate: true
          },
          code: ["-E", "--eval"],
          codeFile: ["-f", "--file", "--makefile"]
        }
      ] as const
  ),
  ...["npm", "pnpm", "yarn"].map(
    (name) =>
      [
        name,
        {
          why: "npm/pnpm/yarn: `exec -c`, `--script-shell`; `exec`/`dlx` run a command (looked through as wrappers)",
          options: { long: ["--script-shell", "--call", "-c"], permute: true },
          shell: ["--call", "-c"],
          special: "npm"
        }
      ] as const
  ),
  [
    "script",
    {
      why: "script: -c runs a shell line; without it, a shell reading stdin",
      options: {
        valued: "cEIOBTtm",
        long: ["--command", "--log-in", "--log-out", "--log-io", "--log-timing", "--echo", "--logging-format"],
        permute: true
      },
      shell: ["-c", "--command"],
      stdin: "code"
    }
  ],
  [
    "gdb",
    {
      why: "gdb: -ex/-iex commands (`shell …`, `python …`), -x/-ix files, commands read from stdin",
      options: {
        long: [
          "-ex",
          "--ex",
          "-eval-command",
          "--eval-command",
          "-iex",
          "--iex",
          "-init-eval-command",
          "-x",
          "--command",
          "-ix",
          "-init-command",
          "-p",
          "--pid",
          "-cd",
          "--cd",
          "-d",
          "--directory",
          "-s",
          "--symbols",
          "-e",
          "--exec",
          "-se",
          "-c",
          "--core",
          "--args"
        ],
        permute: true
      },
      code: ["-ex", "--ex", "-eval-command", "--eval-command", "-iex", "--iex", "-init-eval-command"],
      codeFile: ["-x", "--command", "-ix", "-init-command"],
      stdin: "code",
      inert: ["--version", "--help"]
    }
  ],
  [
    "man",
    {
      why: "man: -P/--pager and -H/--html name a program; MANPAGER/MANOPT",
      options: {
        valued: "PMmSsCLR",
        long: ["--pager", "--html", "--manpath", "--config-file"],
        permute: true,
        abbreviate: true
      },
      shell: ["-P", "--pager", "--html"]
    }
  ],
  ...["nc", "ncat", "netcat"].map(
    (name) =>
      [
        name,
        {
          why: "netcat: -e PROGRAM, -c LINE run commands for a connection",
          options: { valued: "ecpswiqIOTxXgGmP", long: ["--exec", "--sh-exec", "--lua-exec"], permute: true },
          shell: ["-e", "-c", "--exec", "--sh-exec"],
          code: ["--lua-exec"]
        }
      ] as const
  ),
  ["socat", { why: "socat: EXEC: and SYSTEM: addresses run commands", options: { permute: true }, special: "socat" }],
  [
    "tmux",
    { why: "tmux: new-session/run-shell/send-keys … run commands in another shell", options: {}, special: "tmux" }
  ],
  ["screen", { why: "screen: runs its command, `-X stuff` types into another shell", options: {}, stdin: "code" }],
  ...["at", "batch"].map(
    (name) =>
      [
        name,
        {
          why: "at: reads commands from stdin or -f file, to run later",
          options: { valued: "fqtM" },
          codeFile: ["-f"],
          stdin: "code"
        }
      ] as const
  ),
  ["crontab", { why: "crontab: installs commands to run later", options: {}, stdin: "code" }],
  [
    "go",
    {
      why: "go: -exec/-toolexec name programs that run the built code",
      options: { long: ["-exec", "-toolexec", "--exec", "--toolexec"], permute: true },
      shell: ["-exec", "-toolexec", "--exec", "--toolexec"]
    }
  ],
  [
    "git",
    { why: "git: -c keys, aliases, subcommands that run programs (see bash-git.ts)", options: {}, special: "git" }
  ]
])

/** Versioned names (`python3.12`, `perl5.36`, `ruby3.2`, `php8.2`, `pypy3`) and their row. */
const VERSIONED: ReadonlyArray<readonly [RegExp, string]> = [
  [/^python[0-9.]*$/, "python"],
  [/^pypy[0-9.]*$/, "pypy"],
  [/^perl[0-9.]*$/, "perl"],
  [/^ruby[0-9.]*$/, "ruby"],
  [/^php[0-9.]*$/, "php"],
  [/^(Rscript|julia)[0-9.]*$/, "julia"]
]

/** The row of a program, by the basename it is run as. */
export const codeRunner = (name: string): CodeRunner | undefined => {
  const row = CODE_RUNNERS.get(name)
  if (row) return row
  const versioned = VERSIONED.find(([pattern]) => pattern.test(name))
  return versioned ? CODE_RUNNERS.get(versioned[1]) : undefined
}

/**
 * Programs that only ever read data from their standard input: a here-document or here-string fed to one of them
 * is fine. Any other program fed one is unknown under deny rules (it could read the text as code).
 */
export const DATA_STDIN: ReadonlySet<string> = new Set(
  [
    // Text filters and viewers: they print or transform what they read.
    "cat tac head tail grep egrep fgrep rg sort uniq wc tr cut paste column fold fmt nl rev expand unexpand od",
    "xxd hexdump base64 base32 basenc iconv diff cmp comm join split csplit tee jq yq less more most sponge",
    // Checksums and compressors: bytes in, bytes out.
    "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum gzip gunzip zcat bzip2 bunzip2 xz",
    "unxz zstd unzstd lz4 brotli",
    // Programs that ignore their input, or take it as plain words or a message.
    "echo printf true false : xargs dd wc tee git gh mail-data base64 envsubst",
    // Shell builtins that read lines into variables (bash-builtins.ts checks what they read).
    "read mapfile readarray"
  ]
    .join(" ")
    .split(" ")
)

/** Environment variables whose value names code or changes which program runs, and why. */
const CODE_VARIABLES: ReadonlyMap<string, string> = new Map(
  (
    [
      ["PATH", "which programs run"],
      ["BASH_ENV ENV", "a file the shell runs at start"],
      ["PROMPT_COMMAND PS4", "shell code run around each command"],
      ["SHELLOPTS BASHOPTS CDPATH", "how the shell runs the rest of the line"],
      ["BASH_CMDS BASH_ALIASES BASH_LOADABLES_PATH BASH_XTRACEFD", "what the shell's names run"],
      ["LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT DYLD_INSERT_LIBRARIES DYLD_LIBRARY_PATH", "libraries loaded into programs"],
      ["PAGER EDITOR VISUAL BROWSER LESSOPEN LESSCLOSE LESSKEY MANOPT", "a program others run"],
      ["GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_ASKPASS SSH_ASKPASS GIT_PROXY_COMMAND", "a program git runs"],
      [
        "GIT_EXEC_PATH GIT_TEMPLATE_DIR GIT_CONFIG GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT",
        "git's programs or configuration"
      ],
      ["GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM", "git's configuration (aliases, hooks, helpers)"],
      ["NODE_OPTIONS NODE_PATH PERL5OPT PERL5LIB PERLLIB PERL5DB RUBYOPT RUBYLIB", "code an interpreter loads"],
      ["PYTHONSTARTUP PYTHONPATH PYTHONHOME PYTHONINSPECT PYTHONWARNINGS", "code python loads or reads from stdin"],
      ["MAKEFLAGS MFLAGS GNUMAKEFLAGS MAKEFILES", "options and makefiles make reads (--eval)"],
      ["npm_config_script_shell npm_config_node_options TAR_OPTIONS ZIPOPT RSYNC_RSH", "options that run commands"]
    ] as const
  ).flatMap(([names, why]) => names.split(" ").map((name) => [name, why] as const))
)

const CODE_VARIABLE_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^GIT_CONFIG_(KEY|VALUE)_\d+$/, "git configuration given in the environment"],
  [/^GIT_ALIAS/, "git aliases"],
  [/.(_PAGER|PAGER|_EDITOR)$/, "a program others run"],
  [/^(LD|DYLD)_/, "how programs are linked and loaded"]
]

/** Why setting the variable `name` (subscripts ignored: `BASH_CMDS[ls]`) changes what runs, or undefined. */
export const codeVariable = (name: string): string | undefined => {
  const bare = name.replace(/\[.*$/s, "")
  const why = CODE_VARIABLES.get(bare) ?? CODE_VARIABLE_PATTERNS.find(([pattern]) => pattern.test(bare))?.[1]
  return why === undefined ? undefined : `it sets ${bare}, which changes ${why}`
}
