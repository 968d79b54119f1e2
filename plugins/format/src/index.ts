/**
 * @lathe/format: after a successful `write`, `edit`, `multiedit` or `apply_patch` call, runs the project's own
 * formatter (biome, prettier, ruff, gofmt, rustfmt) on the files it touched and tells the model what changed. Each
 * formatter runs through the plugin context's `run` (bash's sandbox, no secrets in its environment); an untrusted
 * project's `node_modules/.bin` is never run, only formatters on the person's PATH or named in the `bin` option.
 *
 * ```json
 * { "plugin": [["@lathe/format", { "timeoutMs": 10000, "disabled": ["prettier"] }]] }
 * ```
 */
import { definePlugin, type Plugin } from "@lathe/plugin"
import { z } from "zod"
import { type FormatFilesOptions, type FormatOutcome, formatFiles } from "./format-files.js"
import { FORMATTER_NAMES, FORMATTERS, type FormatterName } from "./formatters.js"
import { FILE_TOOLS, touchedPaths } from "./touched.js"

export { type FormatFilesOptions, type FormatOutcome, formatFiles } from "./format-files.js"
export {
  type BinarySearch,
  configuredFormatters,
  FORMATTER_NAMES,
  FORMATTERS,
  type Formatter,
  type FormatterName,
  findBinary,
  formatterFor
} from "./formatters.js"
export { FILE_TOOLS, patchPaths, touchedPaths } from "./touched.js"

/** The plugin's options in config: `["@lathe/format", { "timeoutMs": 10000, "disabled": ["prettier"] }]`. */
export const FormatOptions = z
  .object({
    /** Each formatter run is stopped after this many milliseconds (default 10,000). */
    timeoutMs: z.number().int().positive().max(120_000).default(10_000),
    /** Formatters never to run, even when the project configures them. */
    disabled: z.array(z.enum(FORMATTER_NAMES)).default([]),
    /**
     * The executable to run for a formatter, by name (`{ "prettier": "/opt/prettier/bin/prettier" }`): used in every
     * project, trusted or not, in place of the search (an untrusted project's `node_modules/.bin` is never searched).
     */
    bin: z.partialRecord(z.enum(FORMATTER_NAMES), z.string().min(1)).default({})
  })
  .strict()

/** What the plugin records in a tool result's `metadata.formatted`: one entry per formatter that changed files. */
export interface FormattedMetadata {
  readonly formatter: string
  readonly files: ReadonlyArray<string>
}

/** Dependencies of the plugin, injectable for tests. */
export interface FormatPluginDependencies {
  /**
   * The environment whose PATH is searched for formatters (default `process.env`). Formatters themselves run through
   * the context's `run`, with Lathe's environment minus its secrets.
   */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/** The lines appended to a tool's output for the given outcomes (empty when nothing changed and nothing failed). */
export const describeOutcomes = (outcomes: ReadonlyArray<FormatOutcome>): Array<string> =>
  outcomes.flatMap((outcome) => [
    ...(outcome.changed.length > 0
      ? [
          `Formatted with ${outcome.formatter}: ${outcome.changed.join(", ")} ` +
            `(read ${outcome.changed.length === 1 ? "it" : "them"} again before the next edit).`
        ]
      : []),
    ...(outcome.error === undefined ? [] : [`Formatter ${outcome.formatter} failed: ${outcome.error}`])
  ])

/**
 * Builds the plugin over the given dependencies; the default export is `createFormatPlugin()`. Bad options make
 * setup fail with a message naming the option (the host reports it and goes on without the plugin).
 */
export const createFormatPlugin = (dependencies: FormatPluginDependencies = {}): Plugin =>
  definePlugin({
    name: "@lathe/format",
    setup: (ctx) => {
      const parsed = FormatOptions.safeParse(ctx.options)
      if (!parsed.success)
        throw new Error(
          `@lathe/format: invalid options: ${z.prettifyError(parsed.error)}\n` +
            `Expected e.g. ["@lathe/format", { "timeoutMs": 10000, "disabled": ["prettier"] }] in lathe.json.`
        )
      const bins = Object.fromEntries(
        Object.entries(parsed.data.bin).map(([name, path]) => [FORMATTERS[name as FormatterName].bin, path])
      )
      const options: FormatFilesOptions = {
        root: ctx.root,
        directory: ctx.directory,
        env: dependencies.env ?? process.env,
        run: ctx.run,
        trusted: ctx.trusted,
        bins,
        timeoutMs: parsed.data.timeoutMs,
        disabled: new Set(parsed.data.disabled)
      }
      return {
        "tool.after": async (input, output) => {
          if (!FILE_TOOLS.has(input.tool)) return
          const paths = touchedPaths(input.tool, input.args)
          if (paths.length === 0) return
          try {
            const outcomes = await formatFiles(paths, options)
            const lines = describeOutcomes(outcomes)
            if (lines.length > 0) output.output = `${output.output}\n\n${lines.join("\n")}`
            const formatted: Array<FormattedMetadata> = outcomes
              .filter((outcome) => outcome.changed.length > 0)
              .map((outcome) => ({ formatter: outcome.formatter, files: outcome.changed }))
            if (formatted.length > 0) output.metadata.formatted = formatted
          } catch (error) {
            // formatFiles does not reject; this guards the contract that formatting never fails a tool call.
            const reason = error instanceof Error ? error.message : String(error)
            output.output = `${output.output}\n\nFormatting was skipped: ${reason}`
          }
        }
      }
    }
  })

/** The plugin, searching `process.env`'s PATH. */
export default createFormatPlugin()
