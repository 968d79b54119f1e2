// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings here are shell code, whose ${…} are the shell's
import type { CommandSpec, OptionSpec } from "./command-kit.js"

/**
 * The shell completion scripts of `lathe completion bash|zsh|fish`, written out from the commands' specs (the command
 * kit's). Everything the specs say is in the script itself: commands, subcommands, options, and the values of options
 * with `choices`, so pressing Tab starts no process. Only agent and model names, which depend on the project and the
 * keys set up, are asked for when an option takes one (`lathe completion --list agents|models`). This module is pure:
 * the specs in, the script's text out.
 */

/** What the value of an option completes to. */
export type ValueKind =
  | { readonly kind: "choices"; readonly choices: ReadonlyArray<string> }
  | { readonly kind: "agents" | "models" | "files" | "none" }

/** One option as the completion scripts see it. */
export interface CompletionOption {
  /** `--model`, then `-m` when it has a short form. */
  readonly names: ReadonlyArray<string>
  readonly takesValue: boolean
  readonly value: ValueKind
  /** The first line of its description. */
  readonly description: string
}

/** A command as the completion scripts see it: `lathe`, `lathe run`, `lathe session list`. */
export interface CompletionNode {
  /** The words typed, from `lathe` on: `lathe session list`. */
  readonly path: string
  readonly summary: string
  readonly options: ReadonlyArray<CompletionOption>
  readonly subcommands: ReadonlyArray<CompletionNode>
  /** The words its first positional takes, when it takes a fixed set (`lathe completion bash|zsh|fish`). */
  readonly args?: ReadonlyArray<string>
}

/** The dynamic lists `lathe completion --list` prints, one name a line. */
export const LISTS = ["agents", "models"] as const
export type ListName = (typeof LISTS)[number]

const firstLine = (text: string): string => (text.split("\n")[0] ?? "").trim()

/** What an option's value completes to: its choices; agent or model names; file names for a path; else nothing. */
const valueKind = (name: string, option: OptionSpec): ValueKind => {
  if (option.type !== "string") return { kind: "none" }
  if (option.choices !== undefined) return { kind: "choices", choices: option.choices }
  if (name === "agent") return { kind: "agents" }
  if (name === "model") return { kind: "models" }
  if (/file|path|dir/i.test(option.value ?? "")) return { kind: "files" }
  return { kind: "none" }
}

const optionsOf = (spec: CommandSpec): ReadonlyArray<CompletionOption> => {
  const options: Record<string, OptionSpec> = {
    ...spec.options,
    help: spec.options?.help ?? { type: "boolean", short: "h", description: "Show this help" }
  }
  return Object.entries(options).map(([name, option]) => ({
    names: [`--${name}`, ...(option.short ? [`-${option.short}`] : [])],
    takesValue: option.type === "string",
    value: valueKind(name, option),
    description: firstLine(option.description)
  }))
}

/** A command's spec (and its subcommands') as a completion node; `summary` for a top-level command (main.ts's table). */
export const completionNode = (spec: CommandSpec, summary?: string): CompletionNode => ({
  path: spec.name ? `lathe ${spec.name}` : "lathe",
  summary: summary ?? spec.summary ?? "",
  options: optionsOf(spec),
  subcommands: (spec.subcommands ?? []).map((sub) => completionNode(sub))
})

/** Every node of the tree, the root first. */
const nodesOf = (node: CompletionNode): ReadonlyArray<CompletionNode> => [
  node,
  ...node.subcommands.flatMap((sub) => nodesOf(sub))
]

const wordOf = (node: CompletionNode): string => node.path.split(" ").at(-1) ?? node.path

const valued = (node: CompletionNode): ReadonlyArray<string> =>
  node.options.filter((option) => option.takesValue).flatMap((option) => option.names)

/** `text` in single quotes for sh-like shells (bash, zsh). */
const shQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

/** `text` in single quotes for fish. */
const fishQuote = (text: string): string => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`

const listCommand = (list: ListName): string => `lathe completion --list ${list} 2>/dev/null`

const HEADER = (shell: string, install: ReadonlyArray<string>) => [
  `# ${shell} completion for lathe, written by \`lathe completion ${shell}\` from the commands' own options.`,
  ...install.map((line) => `# ${line}`),
  "# Agent and model names come from `lathe completion --list agents|models`, run in the current directory."
]

/**
 * The `case` arms (bash and zsh share the syntax) that complete an option's value, keyed by `"<path> <option>"`:
 * `actions` says, in the shell's words, how to offer fixed choices, file names, or the lines a list command prints.
 */
const valueCasesOf = (
  nodes: ReadonlyArray<CompletionNode>,
  actions: {
    readonly choices: (choices: ReadonlyArray<string>) => string
    readonly files: string
    readonly listed: (listCommand: string) => string
  }
): Array<string> =>
  nodes.flatMap((node) =>
    node.options
      .filter((option) => option.takesValue && option.value.kind !== "none")
      .map((option) => {
        const key = option.names.map((name) => shQuote(`${node.path} ${name}`)).join("|")
        const value = option.value
        const action =
          value.kind === "choices"
            ? actions.choices(value.choices)
            : value.kind === "files"
              ? actions.files
              : actions.listed(listCommand(value.kind === "agents" ? "agents" : "models"))
        return `    ${key}) ${action} ;;`
      })
  )

/** The bash script: `_lathe` walks the words typed to the command they name, then completes what comes next there. */
export const bashScript = (root: CompletionNode): string => {
  const nodes = nodesOf(root)
  const nodeCases = nodes.map((node) =>
    [
      `    ${shQuote(node.path)})`,
      `      subs=${shQuote(node.subcommands.map(wordOf).join(" "))} args=${shQuote((node.args ?? []).join(" "))}`,
      `      opts=${shQuote(node.options.flatMap((option) => option.names).join(" "))}`,
      `      valued=${shQuote(` ${valued(node).join(" ")} `)} ;;`
    ].join("\n")
  )
  const valueCases = valueCasesOf(nodes, {
    choices: (choices) => `COMPREPLY=($(compgen -W ${shQuote(choices.join(" "))} -- "$cur"))`,
    files: `compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur"))`,
    listed: (list) => `COMPREPLY=($(compgen -W "$(${list})" -- "$cur"))`
  })
  return [
    ...HEADER("bash", [
      "Now: source <(lathe completion bash)",
      "For every shell: lathe completion bash > ~/.local/share/bash-completion/completions/lathe"
    ]),
    "",
    "# Sets subs, args (the words its positional takes), opts and valued (the options that take a value) of the command",
    "# typed as $1.",
    "_lathe_node() {",
    "  subs='' args='' opts='' valued=' '",
    '  case "$1" in',
    ...nodeCases,
    "  esac",
    "}",
    "",
    "# Completes the value of option $2 of the command typed as $1; the word so far is $cur.",
    "_lathe_value() {",
    '  case "$1 $2" in',
    ...valueCases,
    "  esac",
    "}",
    "",
    "_lathe() {",
    "  local cur words cword",
    "  # With bash-completion, words are not split at = and : (--format=json, ollama/llama3:8b).",
    "  if declare -F _get_comp_words_by_ref >/dev/null; then",
    "    _get_comp_words_by_ref -n =: cur words cword",
    "  else",
    '    words=("${COMP_WORDS[@]}") cword=$COMP_CWORD cur=${COMP_WORDS[COMP_CWORD]}',
    "  fi",
    "  local cmd=lathe word skip=0 positional=0 i subs args opts valued",
    "  COMPREPLY=()",
    "  for ((i = 1; i < cword; i++)); do",
    "    word=${words[i]}",
    "    if ((skip)); then",
    "      # Without bash-completion, --format=json comes as three words: --format, =, json.",
    "      [[ $word == = ]] || skip=0",
    "      continue",
    "    fi",
    '    _lathe_node "$cmd"',
    "    case $word in",
    "      --) return 0 ;;",
    "      -*=*) ;;",
    '      -*) [[ $valued == *" $word "* ]] && skip=1 ;;',
    '      *) if ((!positional)) && [[ " $subs " == *" $word "* ]]; then cmd="$cmd $word"; else positional=1; fi ;;',
    "    esac",
    "  done",
    '  _lathe_node "$cmd"',
    "  if ((skip)); then",
    '    [[ $cur == = ]] && cur=""',
    '    _lathe_value "$cmd" "${words[i - 1]}"',
    '    [[ ${words[i - 1]} == = ]] && _lathe_value "$cmd" "${words[i - 2]}"',
    "  elif [[ $cur == --*=* ]]; then",
    "    local option=${cur%%=*}",
    "    cur=${cur#*=}",
    '    _lathe_value "$cmd" "$option"',
    "    # Readline completes the text after a = only when = breaks words; else the option goes back in front.",
    '    [[ $COMP_WORDBREAKS == *=* ]] || COMPREPLY=("${COMPREPLY[@]/#/$option=}")',
    "  elif [[ $cur == -* ]]; then",
    '    COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
    "  elif ((!positional)) && [[ -n $subs$args ]]; then",
    '    COMPREPLY=($(compgen -W "$subs $args" -- "$cur"))',
    "  fi",
    '  if [[ $cur == *:* ]] && declare -F __ltrim_colon_completions >/dev/null; then __ltrim_colon_completions "$cur"; fi',
    "  return 0",
    "}",
    "",
    "complete -F _lathe lathe",
    ""
  ].join("\n")
}

/** `text` for `_describe`'s `name:description` items: a colon in it escaped. */
const describeItem = (name: string, description: string): string =>
  shQuote(`${name.replaceAll(":", "\\:")}:${description}`)

/** The zsh script: the same walk as bash's, with descriptions through `_describe`. */
export const zshScript = (root: CompletionNode): string => {
  const nodes = nodesOf(root)
  const nodeCases = nodes.map((node) =>
    [
      `    ${shQuote(node.path)})`,
      `      subs=(${node.subcommands.map((sub) => describeItem(wordOf(sub), sub.summary)).join(" ")})`,
      `      opts=(${node.options.flatMap((option) => option.names.map((name) => describeItem(name, option.description))).join(" ")})`,
      `      args=(${(node.args ?? []).map(shQuote).join(" ")})`,
      `      valued=(${valued(node).map(shQuote).join(" ")}) ;;`
    ].join("\n")
  )
  const valueCases = valueCasesOf(nodes, {
    choices: (choices) => `compadd -- ${choices.map(shQuote).join(" ")}`,
    files: "_files",
    listed: (list) => `compadd -- \${(f)"$(${list})"}`
  })
  return [
    "#compdef lathe",
    ...HEADER("zsh", [
      "Now (after compinit): source <(lathe completion zsh)",
      'For every shell: lathe completion zsh > "${fpath[1]}/_lathe" (a folder on $fpath), then start a new shell'
    ]),
    "",
    "# Sets subs and opts (name:description), args (the words its positional takes) and valued (the options that take",
    "# a value) of the command typed as $1.",
    "_lathe_node() {",
    "  subs=() args=() opts=() valued=()",
    '  case "$1" in',
    ...nodeCases,
    "  esac",
    "}",
    "",
    "# Completes the value of option $2 of the command typed as $1.",
    "_lathe_value() {",
    '  case "$1 $2" in',
    ...valueCases,
    "  esac",
    "}",
    "",
    "_lathe() {",
    "  local cmd=lathe word option",
    "  local -i skip=0 positional=0 i",
    "  local -a subs args opts valued names",
    "  for ((i = 2; i < CURRENT; i++)); do",
    "    word=${words[i]}",
    "    if ((skip)); then skip=0; continue; fi",
    '    _lathe_node "$cmd"',
    "    case $word in",
    "      --) return 1 ;;",
    "      -*=*) ;;",
    "      -*) ((${valued[(Ie)$word]})) && skip=1 ;;",
    "      *)",
    "        names=(${subs%%:*})",
    '        if ((!positional && ${names[(Ie)$word]})); then cmd="$cmd $word"; else positional=1; fi ;;',
    "    esac",
    "  done",
    '  _lathe_node "$cmd"',
    "  if ((skip)); then",
    '    _lathe_value "$cmd" "${words[CURRENT-1]}"',
    "  elif [[ ${words[CURRENT]} == --*=* ]]; then",
    "    option=${words[CURRENT]%%=*}",
    "    compset -P '*='",
    '    _lathe_value "$cmd" "$option"',
    "  elif [[ ${words[CURRENT]} == -* ]]; then",
    "    _describe -t options option opts",
    "  elif ((!positional)); then",
    "    ((${#subs})) && _describe -t commands command subs",
    "    ((${#args})) && compadd -- $args",
    "  fi",
    "}",
    "",
    'if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then _lathe "$@"; else compdef _lathe lathe; fi',
    ""
  ].join("\n")
}

/** The fish script: `__lathe_walk` finds the command typed; every option and subcommand is a `complete` under it. */
export const fishScript = (root: CompletionNode): string => {
  const nodes = nodesOf(root)
  const switchOf = (name: string, of: (node: CompletionNode) => ReadonlyArray<string>) => [
    `function ${name}`,
    "    switch $argv[1]",
    ...nodes
      .filter((node) => of(node).length > 0)
      .flatMap((node) => [
        `        case ${fishQuote(node.path)}`,
        `            printf '%s\\n' ${of(node).map(fishQuote).join(" ")}`
      ]),
    "    end",
    "end"
  ]
  const lines: Array<string> = []
  for (const node of nodes) {
    if (node.args?.length)
      lines.push(
        `complete -c lathe -n ${fishQuote(`__lathe_sub ${shQuote(node.path)}`)} -f -a ${fishQuote(node.args.join(" "))}`
      )
    for (const sub of node.subcommands)
      lines.push(
        `complete -c lathe -n ${fishQuote(`__lathe_sub ${shQuote(node.path)}`)} -f -a ${fishQuote(wordOf(sub))} -d ${fishQuote(sub.summary)}`
      )
    for (const option of node.options) {
      const [long, short] = option.names
      const flags = [`-l ${fishQuote((long ?? "").slice(2))}`, ...(short ? [`-s ${fishQuote(short.slice(1))}`] : [])]
      const value = option.value
      const takes = !option.takesValue
        ? []
        : value.kind === "files"
          ? ["-r", "-F"]
          : value.kind === "choices"
            ? ["-x", "-a", fishQuote(value.choices.join(" "))]
            : value.kind === "agents" || value.kind === "models"
              ? ["-x", "-a", fishQuote(`(${listCommand(value.kind)})`)]
              : ["-x"]
      lines.push(
        [
          "complete -c lathe",
          `-n ${fishQuote(`__lathe_at ${shQuote(node.path)}`)}`,
          ...flags,
          ...takes,
          `-d ${fishQuote(option.description)}`
        ].join(" ")
      )
    }
  }
  return [
    ...HEADER("fish", [
      "Now: lathe completion fish | source",
      "For every shell: lathe completion fish > ~/.config/fish/completions/lathe.fish"
    ]),
    "",
    "# The subcommands of the command typed as $argv[1].",
    ...switchOf("__lathe_subs", (node) => node.subcommands.map(wordOf)),
    "",
    "# The options that take a value, of the command typed as $argv[1].",
    ...switchOf("__lathe_valued", valued),
    "",
    "# Prints the command the words typed so far name (lathe, lathe session list), then 1 if a positional came, else 0.",
    "function __lathe_walk",
    "    set -l words (commandline -opc)",
    "    set -l cmd lathe",
    "    set -l skip 0",
    "    set -l positional 0",
    "    for word in $words[2..-1]",
    "        if test $skip = 1",
    "            set skip 0",
    "            continue",
    "        end",
    "        switch $word",
    "            case --",
    "                set positional 1",
    "                break",
    "            case '-*=*'",
    "            case '-*'",
    "                contains -- $word (__lathe_valued $cmd); and set skip 1",
    "            case '*'",
    "                if test $positional = 0; and contains -- $word (__lathe_subs $cmd)",
    '                    set cmd "$cmd $word"',
    "                else",
    "                    set positional 1",
    "                end",
    "        end",
    "    end",
    "    echo $cmd",
    "    echo $positional",
    "end",
    "",
    "# Whether the words typed so far name the command $argv[1].",
    "function __lathe_at",
    "    set -l state (__lathe_walk)",
    '    test "$state[1]" = "$argv[1]"',
    "end",
    "",
    "# Whether they name the command $argv[1] and no positional came yet (a subcommand may follow).",
    "function __lathe_sub",
    "    set -l state (__lathe_walk)",
    '    test "$state[1]" = "$argv[1]" -a "$state[2]" = 0',
    "end",
    "",
    "complete -c lathe -f",
    ...lines,
    ""
  ].join("\n")
}

/** The shells `lathe completion` writes a script for. */
export const SHELLS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const
export type Shell = keyof typeof SHELLS
