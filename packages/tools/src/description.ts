import { readFileSync } from "node:fs"

/**
 * Reads a tool's long description from `src/<name>.txt`. The URL is relative to this module and goes through
 * `../src/`, so it resolves to the same file whether the module runs from `src/` (tests, tsx) or from `dist/`
 * (the build); the package publishes `src/` for this reason. Read once, when the tool module loads.
 */
export const loadDescription = (name: string): string =>
  readFileSync(new URL(`../src/${name}.txt`, import.meta.url), "utf8").trim()
