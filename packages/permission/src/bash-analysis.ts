/**
 * What the bash analysis finds and how its parts talk: the result types `analyzeWith` returns (re-exported by
 * `bash.ts`), and the contract between the walker and the program handlers (`bash-programs.ts`, `bash-git.ts`).
 */
import type { Arg } from "./bash-word.js"

/** One simple command found in a command line. */
export interface SimpleCommand {
  /** The normalised argv: wrappers, env assignments, escapes and program directories removed. */
  readonly argv: ReadonlyArray<string>
  /** The argv as one shell-quoted line: what bash rules match against. */
  readonly text: string
  /** The pattern an "always" reply remembers: `git push *`, `ls *`. */
  readonly always: string
  /**
   * Present when the command's tail is not known statically (a word expanded at run time, a glob, arguments
   * `xargs` appends): the text before the first such word. Rules that could match a completion of it decide.
   */
  readonly prefix?: string
}

/** A path a command line writes to that cannot be known statically. */
export interface UnknownWrite {
  /** The target as written (`$OUT`, `~bob/x`), or the program that writes (`xargs rm`). */
  readonly target: string
  readonly reason: string
}

/**
 * A write that a path made by another command of the line may redirect: `ln -s /etc x && echo > x/f`. The checks
 * turn a write that goes through `created` (or any write, when `created` is absent) into an unknown write.
 */
export interface ThroughCreated {
  /** The written path, as in `writes` or `globWrites`. */
  readonly write: string
  /**
   * A path the other command may create or replace (a link, a moved, copied or extracted file), in the same form;
   * absent when its destinations are not known statically.
   */
  readonly created?: string
  /** The program that may create it. */
  readonly by: string
}

/** What a command line does, as far as can be known without running it. */
export interface CommandAnalysis {
  /** Every simple command, including those in pipes, lists, subshells, substitutions, `bash -c` and `find -exec`. */
  readonly commands: ReadonlyArray<SimpleCommand>
  /**
   * Why some command of the line cannot be known statically (a syntax error, a computed command name, a shell
   * reading its standard input, `python -c` …); the line is then checked as a whole, as an unknown command.
   */
  readonly unparsable?: string
  /** Paths the line writes to (redirections, `rm`, `cp` targets …): absolute, `~…`, or relative to its cwd. */
  readonly writes: ReadonlyArray<string>
  /** Written paths holding an unquoted glob: the shell writes whatever files match (same forms as `writes`). */
  readonly globWrites: ReadonlyArray<string>
  /** Writes whose target cannot be known statically. */
  readonly unknownWrites: ReadonlyArray<UnknownWrite>
  /** Writes that a link or other path made by another command of the line may redirect. */
  readonly throughCreated: ReadonlyArray<ThroughCreated>
}

/** What a command reads on its standard input, as far as the line shows. */
export type Stdin =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "unknown"; readonly what: string }
  | undefined

/** What a program handler may do with the walker. */
export interface ProgramContext {
  readonly stdin: Stdin
  /** Analyses a command line this command runs; `isolate` when it runs in a child process (its `cd` stays there). */
  line(text: string, isolate: boolean): void
  /** Analyses an argv this command runs, with `{}` standing for `roots` when given (`find -exec`). */
  run(argv: ReadonlyArray<Arg>, roots?: ReadonlyArray<Arg>, execdir?: boolean): void
  /** Marks the line unknown. */
  unknown(reason: string): void
  /** A path this command writes. */
  write(arg: Arg): void
}
