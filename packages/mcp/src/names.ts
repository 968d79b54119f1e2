/** Tool names the model sees: `<server>_<tool>`, sanitised, bounded, unique. */

/** The longest tool name providers accept. */
export const MAX_TOOL_NAME = 64

/** Replaces every character outside `[A-Za-z0-9_-]` with `_`. */
export const sanitizeName = (text: string): string => text.replace(/[^A-Za-z0-9_-]/g, "_")

/** One server tool to name. */
export interface ToolRef {
  readonly server: string
  readonly tool: string
}

/** A server tool with the Lathe name it was given. */
export interface NamedToolRef extends ToolRef {
  readonly name: string
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Names each tool `<server>_<tool>` with characters outside `[A-Za-z0-9_-]` turned into `_`, cut to 64 characters.
 * Collisions (after sanitising or cutting, or with a `taken` name) are resolved deterministically, whatever order
 * the servers answered in: refs are ranked by server then tool name, the first keeps the plain name and the next get
 * `_2`, `_3`, … (cut so the whole stays within 64). Returns the refs in the order given.
 */
export const assignToolNames = (refs: ReadonlyArray<ToolRef>, taken: Iterable<string> = []): Array<NamedToolRef> => {
  const used = new Set(taken)
  const ranked = refs
    .map((ref, index) => ({ ref, index }))
    .sort((a, b) => compare(a.ref.server, b.ref.server) || compare(a.ref.tool, b.ref.tool) || a.index - b.index)
  const names = new Array<string>(refs.length)
  for (const { ref, index } of ranked) {
    const base = sanitizeName(`${ref.server}_${ref.tool}`).slice(0, MAX_TOOL_NAME)
    let name = base
    for (let n = 2; used.has(name); n++) {
      const suffix = `_${n}`
      name = base.slice(0, MAX_TOOL_NAME - suffix.length) + suffix
    }
    used.add(name)
    names[index] = name
  }
  return refs.map((ref, index) => ({ ...ref, name: names[index] ?? "" }))
}
