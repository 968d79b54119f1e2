/**
 * Bash builtins and expansions that evaluate text or rebind names: `hash -p`, `mapfile -C`, `compgen -C`,
 * `complete -C`, `enable -f`, `fc`, `${x@P}`, and array subscripts that bash evaluates as arithmetic (where a
 * `$(…)` inside runs): `(( a[$i] ))`, `test -v 'a[$(…)]'`, `declare 'a[$(…)]'`, `printf -v`, `read`, `unset`.
 */
import type { Node } from "web-tree-sitter"
import type { Arg } from "./bash-word.js"

/** A word naming a variable with a subscript bash expands when it evaluates it (`a[$i]`, `a[$(rm x)]`). */
const CODE_SUBSCRIPT = /\[[^\]]*[$`]/

/** A stored value that holds shell code bash may run later, in arithmetic or a subscript (`x='a[$(rm y)]'`). */
const CODE_TEXT = /\$\(|`|\$\{|\[[^\]]*\$/

const SUBSCRIPT_WHY = "an array subscript holds an expansion, which bash evaluates as code"

/** Why a builtin's argv evaluates text or rebinds a name, or undefined (argv[0] is the builtin's name). */
export const builtinArgv = (argv: ReadonlyArray<Arg>, here: string | undefined): string | undefined => {
  const name = argv[0]?.value ?? ""
  const args = argv.slice(1)
  const has = (pattern: RegExp) => args.some((arg) => !arg.dynamic && pattern.test(arg.value))
  if (name === "hash" && has(/^-[a-z]*p/)) return "hash -p binds a command name to another program"
  if ((name === "mapfile" || name === "readarray") && has(/^-[a-zA-Z]*C/)) return `${name} -C runs a callback`
  if (name === "compgen" && has(/^-[a-zA-Z]*[CF]/)) return "compgen -C/-F runs a command or function"
  if (name === "complete" && has(/^-[a-zA-Z]*[CF]/)) return "complete -C/-F binds a command to run"
  if (name === "enable" && has(/^-[a-zA-Z]*f/)) return "enable -f loads a builtin from a shared library"
  if (name === "fc") return "fc runs commands from the shell's history"
  const named = ["test", "[", "let", "printf", "read", "mapfile", "readarray", "unset", "wait", "getopts"]
  if (named.includes(name) && args.some((arg) => CODE_SUBSCRIPT.test(arg.value))) return SUBSCRIPT_WHY
  if (["read", "mapfile", "readarray"].includes(name) && here !== undefined && CODE_TEXT.test(here)) {
    return `${name} reads text holding shell code into a variable, which arithmetic would run`
  }
  return undefined
}

/** Why a parse-tree node evaluates text as code, or undefined. */
export const builtinNode = (node: Node): string | undefined => {
  const type = node.type
  if (type === "expansion" && /@P\}$/.test(node.text))
    return "the @P transformation expands a value as a prompt, running what it holds"
  if (
    type === "arithmetic_expansion" ||
    type === "c_style_for_statement" ||
    (type === "compound_statement" && node.text.startsWith("(("))
  ) {
    return CODE_SUBSCRIPT.test(node.text) ? SUBSCRIPT_WHY : undefined
  }
  if (type === "test_command" && /-v\s/.test(node.text) && CODE_SUBSCRIPT.test(node.text)) return SUBSCRIPT_WHY
  if (type === "declaration_command" || type === "unset_command") {
    // `declare 'a[$(…)]'`: the quoted word is static, but bash reads it as a subscripted name and evaluates it.
    for (const child of node.namedChildren) {
      if (child && child.type !== "variable_assignment" && CODE_SUBSCRIPT.test(child.text)) return SUBSCRIPT_WHY
    }
  }
  return undefined
}

/** Why an assignment's static value holds code bash may run later (in arithmetic, `${!x}`, a subscript). */
export const storedCode = (value: Arg): string | undefined =>
  !value.dynamic && CODE_TEXT.test(value.value)
    ? "it stores shell code in a variable, which bash runs if the value is used in arithmetic"
    : undefined
