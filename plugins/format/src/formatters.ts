import { constants } from "node:fs"
import { access, readdir, readFile, stat } from "node:fs/promises"
import { delimiter, extname, isAbsolute, join, relative, resolve } from "node:path"
import { z } from "zod"

/** The formatters the plugin knows, in the order it prefers them when several could format a file. */
export const FORMATTER_NAMES = ["biome", "prettier", "ruff", "gofmt", "rustfmt"] as const

/** A formatter's name. */
export type FormatterName = (typeof FORMATTER_NAMES)[number]

/** How to run one formatter. */
export interface Formatter {
  readonly name: FormatterName
  /** The executable: named in the plugin's options, else the trusted project's `node_modules/.bin`, else PATH. */
  readonly bin: string
  /** The file extensions it formats (lower case, with the dot). */
  readonly extensions: ReadonlySet<string>
  /** Its arguments to format the given files (absolute paths) in place; it runs in the project root. */
  readonly args: (files: ReadonlyArray<string>) => Array<string>
}

const WEB = [".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".json", ".jsonc", ".css"]

/** Every formatter the plugin can run. */
export const FORMATTERS: Readonly<Record<FormatterName, Formatter>> = {
  biome: {
    name: "biome",
    bin: "biome",
    extensions: new Set([...WEB, ".graphql", ".gql"]),
    args: (files) => ["format", "--write", "--no-errors-on-unmatched", "--colors=off", ...files]
  },
  prettier: {
    name: "prettier",
    bin: "prettier",
    extensions: new Set([...WEB, ".json5", ".scss", ".less", ".html", ".vue", ".md", ".mdx", ".yaml", ".yml"]),
    args: (files) => ["--write", "--ignore-unknown", "--log-level=warn", ...files]
  },
  ruff: { name: "ruff", bin: "ruff", extensions: new Set([".py", ".pyi"]), args: (files) => ["format", ...files] },
  gofmt: { name: "gofmt", bin: "gofmt", extensions: new Set([".go"]), args: (files) => ["-w", ...files] },
  rustfmt: {
    name: "rustfmt",
    bin: "rustfmt",
    extensions: new Set([".rs"]),
    // rustfmt defaults to the 2015 edition, which cannot parse `async fn` and friends; a rustfmt.toml still wins.
    args: (files) => ["--edition", "2021", ...files]
  }
}

const PRETTIER_FILES = /^(?:\.prettierrc(?:\.(?:json5?|ya?ml|toml|[cm]?[jt]s))?|prettier\.config\.[cm]?[jt]s)$/
const PackageJson = z.looseObject({ prettier: z.unknown().optional() })

const readText = (path: string) => readFile(path, "utf8").catch(() => undefined)

const hasPrettierKey = async (root: string): Promise<boolean> => {
  const text = await readText(join(root, "package.json"))
  if (text === undefined) return false
  try {
    const parsed = PackageJson.safeParse(JSON.parse(text))
    return parsed.success && parsed.data.prettier !== undefined
  } catch {
    return false
  }
}

/**
 * The formatters the project at `root` asks for, by its own config files at the root: biome (`biome.json(c)`),
 * prettier (`.prettierrc*`, `prettier.config.*` or a `prettier` key in package.json), ruff (`ruff.toml`,
 * `.ruff.toml`, or a `[tool.ruff]` table in pyproject.toml). gofmt and rustfmt need no config: they are always
 * listed, and apply when their binary is found. Never throws: an unreadable root lists only gofmt and rustfmt.
 */
export const configuredFormatters = async (root: string): Promise<Array<FormatterName>> => {
  const names = new Set(await readdir(root).catch(() => []))
  const found: Array<FormatterName> = []
  if (names.has("biome.json") || names.has("biome.jsonc")) found.push("biome")
  if (
    [...names].some((name) => PRETTIER_FILES.test(name)) ||
    (names.has("package.json") && (await hasPrettierKey(root)))
  )
    found.push("prettier")
  if (names.has("ruff.toml") || names.has(".ruff.toml")) found.push("ruff")
  else if (names.has("pyproject.toml")) {
    const text = await readText(join(root, "pyproject.toml"))
    if (text !== undefined && /^\s*\[tool\.ruff[.\]]/m.test(text)) found.push("ruff")
  }
  found.push("gofmt", "rustfmt")
  return found
}

/** The first of `formatters` (in the given order) that formats files with `file`'s extension, if any. */
export const formatterFor = (file: string, formatters: ReadonlyArray<FormatterName>): Formatter | undefined => {
  const extension = extname(file).toLowerCase()
  return formatters.map((name) => FORMATTERS[name]).find((formatter) => formatter.extensions.has(extension))
}

const isExecutable = async (path: string): Promise<boolean> => {
  try {
    await access(path, constants.X_OK)
    return (await stat(path)).isFile()
  } catch {
    return false
  }
}

/** Where {@link findBinary} may look. */
export interface BinarySearch {
  /**
   * Whether the project is trusted: only then is its own `node_modules/.bin` searched. An untrusted project's PATH
   * entries that point into it (or are relative, like `.` or `node_modules/.bin`) are skipped too.
   */
  readonly trusted: boolean
  /** Executables the person named in their config, by formatter binary name; they win over every search. */
  readonly bins?: Readonly<Record<string, string>>
}

const isInside = (root: string, path: string): boolean => {
  const rel = relative(root, path)
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))
}

/**
 * Where `bin` lives: the executable the person named for it (`bins`), else the project's own
 * `node_modules/.bin/<bin>` when the project is trusted, else the first directory of `PATH` (from `env`) holding an
 * executable of that name, leaving out, in an untrusted project, relative entries and entries inside the project (a
 * cloned repository must not choose the program Lathe runs); `undefined` when none has it.
 */
export const findBinary = async (
  root: string,
  bin: string,
  env: Readonly<Record<string, string | undefined>>,
  search: BinarySearch = { trusted: true }
): Promise<string | undefined> => {
  const named = search.bins?.[bin]
  if (named !== undefined) return (await isExecutable(named)) ? named : undefined
  const onPath = (env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => dir !== "" && (search.trusted || (isAbsolute(dir) && !isInside(resolve(root), resolve(dir)))))
  const dirs = [...(search.trusted ? [join(root, "node_modules", ".bin")] : []), ...onPath]
  for (const dir of dirs) {
    const candidate = join(dir, bin)
    if (await isExecutable(candidate)) return candidate
  }
  return undefined
}
