/**
 * A config snippet on one line, as JSON a person pastes into their `lathe.json`: `{ "a": { "b": [1, 2] } }`. Numbers
 * are written plainly (128000, never 128_000), keys and strings JSON-quoted, `undefined` entries left out. Lathe prints
 * every piece of config advice with it (notices, errors, `lathe doctor`); a plugin that tells a person how to set its
 * options prints them the same way, e.g. `renderSnippet({ plugin: [["my-plugin", { level: 2 }]] })`.
 */
export const renderSnippet = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(renderSnippet).join(", ")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined)
    if (entries.length === 0) return "{}"
    return `{ ${entries.map(([key, item]) => `${JSON.stringify(key)}: ${renderSnippet(item)}`).join(", ")} }`
  }
  return JSON.stringify(value)
}
