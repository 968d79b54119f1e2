/**
 * One option parser for every program the analyser looks inside: each program gives its grammar (which options
 * take a value, which are flags, whether options may follow operands), and the parser splits its arguments the
 * way the program itself would — attached values (`-ovalue`, `--opt=value`), clustered short options (`-Bc`),
 * `--` ending options, GNU abbreviations of long options (`--to-com=` is `--to-command=`).
 */
import type { Arg } from "./bash-word.js"

/** How one program reads its options. Option names are written with their dashes: `-c`, `--eval`, `-ex`. */
export interface OptionGrammar {
  /** Short option letters that take a value, attached (`-Wignore`) or as the next word (`-W ignore`). */
  readonly valued?: string
  /** Short letters whose value can only be attached: the rest of the cluster, maybe empty (`perl -i.bak`, `-0777`). */
  readonly attached?: string
  /** Short letters that are flags. With `strict`, a letter in none of the lists makes the arguments unknown. */
  readonly flags?: string
  /** Long options that take a value (`--opt value` or `--opt=value`), and single-dash long ones (`-ex`, `-name`). */
  readonly long?: ReadonlyArray<string>
  /** Long options that take two values (`bwrap --bind SRC DEST`); the second is kept as the value. */
  readonly long2?: ReadonlyArray<string>
  /** Long options that take no value (or only an attached one: `--inspect=9229`). */
  readonly longFlags?: ReadonlyArray<string>
  /** Options after which every word is an operand (`python -c CODE args`, `python -m mod args`). */
  readonly last?: ReadonlyArray<string>
  /** Options may follow operands (GNU permutation); otherwise the first operand ends the options. */
  readonly permute?: boolean
  /** Long options may be abbreviated to any prefix (GNU `getopt_long`). */
  readonly abbreviate?: boolean
  /** An option this grammar does not list makes the arguments unknown (it could take the next word as its value). */
  readonly strict?: boolean
  /** `-5`, `-n10`-like numeric options (`nice -5`) are flags. */
  readonly numeric?: boolean
  /** `+word` is an option with its value attached (`vim +cmd`, `set +o`). */
  readonly plus?: boolean
}

/** One parsed option: its canonical name (`-c`, `--eval`) and its value when it takes one. */
export interface ParsedOption {
  readonly name: string
  readonly value?: Arg
}

/** A program's arguments split into options and operands. */
export interface ParsedArgs {
  readonly options: ReadonlyArray<ParsedOption>
  readonly operands: ReadonlyArray<Arg>
  /** Index (in the parsed words) of the first operand when options stop at it; `words.length` when none. */
  readonly end: number
  /** Why the split cannot be known statically: a word computed at run time, or an option the grammar lacks. */
  readonly unknown?: string
}

const longName = (grammar: OptionGrammar, name: string): string | undefined => {
  const all = [...(grammar.long ?? []), ...(grammar.long2 ?? []), ...(grammar.longFlags ?? [])]
  if (all.includes(name)) return name
  if (!grammar.abbreviate || !name.startsWith("--") || name.length < 4) return undefined
  const matches = all.filter((option) => option.startsWith(name))
  return matches.length > 0 ? (matches[0] as string) : undefined
}

const staticArg = (text: string): Arg => ({ value: text, dynamic: false })

/** Splits `words` (the arguments after the program name) by `grammar`. */
export const parseOptions = (words: ReadonlyArray<Arg>, grammar: OptionGrammar): ParsedArgs => {
  const options: Array<ParsedOption> = []
  const operands: Array<Arg> = []
  const valued = grammar.valued ?? ""
  const attached = grammar.attached ?? ""
  const known = valued + attached + (grammar.flags ?? "")
  let unknown: string | undefined
  let end = words.length
  const stop = (i: number, skip = 0) => {
    end = Math.min(end, i + skip)
    operands.push(...words.slice(i + skip))
  }
  for (let i = 0; i < words.length; i++) {
    const arg = words[i] as Arg
    const text = arg.value
    if (arg.dynamic) {
      // A run-time word in option position may be an option. Where options may follow operands, a quoted
      // expansion (`"$f"`) is taken for an operand: it is one word, and the line would have to give it a dash.
      if (!grammar.permute || !text.startsWith('"')) unknown ??= `an argument is computed at run time (${text})`
      if (!grammar.permute) {
        stop(i)
        break
      }
      operands.push(arg)
      continue
    }
    if (text === "--") {
      stop(i, 1)
      break
    }
    const plus = grammar.plus && text.startsWith("+") && text.length > 1
    if (!plus && (!text.startsWith("-") || text === "-" || (grammar.numeric && /^-\d+$/.test(text)))) {
      if (grammar.numeric && /^-\d+$/.test(text)) {
        options.push({ name: text })
        continue
      }
      if (!grammar.permute) {
        stop(i)
        break
      }
      operands.push(arg)
      continue
    }
    if (plus) {
      options.push({ name: "+", value: staticArg(text.slice(1)) })
      continue
    }
    const eq = text.indexOf("=")
    const head = eq < 0 ? text : text.slice(0, eq)
    const long = text.startsWith("--") || longName(grammar, head) !== undefined
    if (long) {
      const name = longName(grammar, head)
      if (name === undefined) {
        if (grammar.strict) unknown ??= `the option ${head} is not one Lathe knows`
        options.push({ name: head, ...(eq >= 0 ? { value: staticArg(text.slice(eq + 1)) } : {}) })
        continue
      }
      const takes = (grammar.long ?? []).includes(name)
      if ((grammar.long2 ?? []).includes(name)) {
        i += 2
        options.push({ name, ...(words[i] ? { value: words[i] as Arg } : {}) })
        continue
      }
      if (eq >= 0) options.push({ name, value: staticArg(text.slice(eq + 1)) })
      else if (takes && i + 1 < words.length) options.push({ name, value: words[++i] as Arg })
      else options.push({ name })
      if ((grammar.last ?? []).includes(name)) {
        stop(i + 1)
        break
      }
      continue
    }
    // A short cluster: `-Bc`, `-Wignore`, `-W ignore`, `-i.bak`.
    let last = false
    for (let j = 1; j < text.length; j++) {
      const letter = text[j] as string
      const name = `-${letter}`
      if (grammar.numeric && /\d/.test(letter)) continue
      if (!known.includes(letter) && grammar.strict) unknown ??= `the option ${name} is not one Lathe knows`
      if (attached.includes(letter)) {
        options.push({ name, value: staticArg(text.slice(j + 1)) })
        break
      }
      if (valued.includes(letter)) {
        const rest = text.slice(j + 1)
        if (rest !== "") options.push({ name, value: staticArg(rest) })
        else if (i + 1 < words.length) options.push({ name, value: words[++i] as Arg })
        else options.push({ name })
        last = (grammar.last ?? []).includes(name)
        break
      }
      options.push({ name })
      if ((grammar.last ?? []).includes(name)) last = true
    }
    if (last) {
      stop(i + 1)
      break
    }
  }
  return { options, operands, end, ...(unknown ? { unknown } : {}) }
}

/** The values given to any of `names` (in order). */
export const valuesOf = (parsed: ParsedArgs, names: ReadonlyArray<string>): ReadonlyArray<Arg> =>
  parsed.options.flatMap((option) => (names.includes(option.name) && option.value ? [option.value] : []))

/** Whether any of `names` was given. */
export const hasOption = (parsed: ParsedArgs, names: ReadonlyArray<string>): boolean =>
  parsed.options.some((option) => names.includes(option.name))
