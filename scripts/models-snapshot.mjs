#!/usr/bin/env node
// Maintainer script: writes packages/core/src/catalog/snapshot.json, the model catalogue Lathe ships, from the
// models.dev data (https://github.com/sst/models.dev: providers/<id>/provider.toml, providers/<id>/models/**.toml,
// and models/**.toml with the facts a provider's model inherits through `base_model`).
//
//   node scripts/models-snapshot.mjs <models.dev checkout>     # a folder holding providers/ (and models/)
//   node scripts/models-snapshot.mjs --api <api.json>         # or the published https://models.dev/api.json
//
// The snapshot is `{ columns, providers }`: provider id → { name, env, npm, api, models }, `models` being the JSON
// text of model id → one row of the `columns` (name, context and output limits, input/output/cache-read/cache-write prices per million tokens, the
// reasoning/tool_call/attachment/temperature flags, the input modalities, knowledge and release dates). Keys are
// sorted so a regeneration diffs by the facts that changed. Never run at build time.
import { readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"

const OUT = join(dirname(fileURLToPath(import.meta.url)), "../packages/core/src/catalog/snapshot.json")

// ---- A TOML subset: comments, bare/quoted keys, dotted keys, [table], [[array of tables]], basic and literal
// strings, numbers with underscores, booleans, multi-line arrays and nested inline tables. Enough for models.dev.

/** Parses `text` (TOML subset) into a plain object; `file` names it in errors. */
export const parseToml = (text, file = "<toml>") => {
  let i = 0
  const fail = (what) => {
    const line = text.slice(0, i).split("\n").length
    throw new Error(`${file}:${line}: ${what}`)
  }
  const skip = (newlines) => {
    for (;;) {
      const c = text[i]
      if (c === " " || c === "\t" || c === "\r" || (newlines && c === "\n")) i++
      else if (c === "#") while (i < text.length && text[i] !== "\n") i++
      else return
    }
  }
  const string = () => {
    const quote = text[i++]
    let out = ""
    while (text[i] !== quote) {
      if (i >= text.length || text[i] === "\n") fail("unterminated string")
      if (quote === '"' && text[i] === "\\") {
        const e = text[i + 1]
        const simple = { n: "\n", t: "\t", r: "\r", '"': '"', "\\": "\\", b: "\b", f: "\f" }[e]
        if (simple !== undefined) {
          out += simple
          i += 2
        } else if (e === "u" || e === "U") {
          const len = e === "u" ? 4 : 8
          out += String.fromCodePoint(Number.parseInt(text.slice(i + 2, i + 2 + len), 16))
          i += 2 + len
        } else fail(`bad escape \\${e}`)
      } else out += text[i++]
    }
    i++
    return out
  }
  const key = () => {
    const parts = []
    for (;;) {
      skip(false)
      if (text[i] === '"' || text[i] === "'") parts.push(string())
      else {
        const m = /^[A-Za-z0-9_-]+/.exec(text.slice(i, i + 200))
        if (!m) fail("expected a key")
        parts.push(m[0])
        i += m[0].length
      }
      skip(false)
      if (text[i] !== ".") return parts
      i++
    }
  }
  const value = () => {
    skip(false)
    const c = text[i]
    if (c === '"' || c === "'") {
      if (text.startsWith(c.repeat(3), i)) fail("multi-line strings are not supported")
      return string()
    }
    if (c === "[") {
      i++
      const items = []
      for (;;) {
        skip(true)
        if (text[i] === "]") break
        items.push(value())
        skip(true)
        if (text[i] === ",") i++
        else if (text[i] !== "]") fail("expected , or ] in an array")
      }
      i++
      return items
    }
    if (c === "{") {
      i++
      const table = {}
      skip(false)
      if (text[i] === "}") {
        i++
        return table
      }
      for (;;) {
        const path = key()
        if (text[i] !== "=") fail("expected = in an inline table")
        i++
        assign(table, path, value())
        skip(false)
        if (text[i] === ",") i++
        else if (text[i] === "}") {
          i++
          return table
        } else fail("expected , or } in an inline table")
      }
    }
    const m = /^[^\s,\]}#]+/.exec(text.slice(i, i + 100))
    if (!m) fail("expected a value")
    i += m[0].length
    if (m[0] === "true") return true
    if (m[0] === "false") return false
    const n = Number(m[0].replaceAll("_", ""))
    if (Number.isNaN(n)) fail(`unsupported value ${m[0]}`)
    return n
  }
  const root = {}
  let current = root
  const descend = (table, path) => {
    let t = table
    for (const part of path) {
      const next = t[part]
      if (Array.isArray(next)) t = next[next.length - 1]
      else if (next !== undefined) t = next
      else t = t[part] = {}
    }
    return t
  }
  const assign = (table, path, v) => {
    const parent = descend(table, path.slice(0, -1))
    parent[path[path.length - 1]] = v
  }
  for (;;) {
    skip(true)
    if (i >= text.length) return root
    if (text[i] === "[") {
      const many = text[i + 1] === "["
      i += many ? 2 : 1
      const path = key()
      if (text[i] !== "]" || (many && text[i + 1] !== "]")) fail("expected ] after a table name")
      i += many ? 2 : 1
      if (many) {
        const parent = descend(root, path.slice(0, -1))
        const last = path[path.length - 1]
        parent[last] ??= []
        current = {}
        parent[last].push(current)
      } else current = descend(root, path)
    } else {
      const path = key()
      if (text[i] !== "=") fail("expected =")
      i++
      assign(current, path, value())
    }
    skip(false)
    if (i < text.length && text[i] !== "\n") fail("expected the end of the line")
  }
}

// ---- models.dev's tree to api.json's shape.

const tomlFiles = (dir, base = dir) => {
  let out = []
  let entries
  try {
    entries = readdirSync(dir)
  } catch {
    return out
  }
  for (const name of entries) {
    const path = join(dir, name)
    const stat = statSync(path, { throwIfNoEntry: false }) // follows symlinks; a dangling one is skipped
    if (stat === undefined) continue
    if (stat.isDirectory()) out = out.concat(tomlFiles(path, base))
    else if (name.endsWith(".toml")) out.push([relative(base, path).split(sep).join("/").slice(0, -5), path])
  }
  return out
}

const read = (path) => parseToml(readFileSync(realpathSync(path), "utf8"), path)

const isTable = (v) => v !== null && typeof v === "object" && !Array.isArray(v)

const mergeDeep = (base, over) => {
  const out = { ...base }
  for (const [k, v] of Object.entries(over)) out[k] = isTable(v) && isTable(base[k]) ? mergeDeep(base[k], v) : v
  return out
}

const omitPath = (target, path) => {
  const parts = path.split(".")
  let t = target
  for (const part of parts.slice(0, -1)) {
    if (!isTable(t[part])) return
    t = t[part]
  }
  delete t[parts[parts.length - 1]]
}

/** The tree of a models.dev checkout (`root`) as api.json: provider id → provider with its models. */
const fromTree = (root) => {
  const facts = Object.fromEntries(tomlFiles(join(root, "models")).map(([id, path]) => [id, read(path)]))
  const providers = {}
  for (const id of readdirSync(join(root, "providers")).sort()) {
    const dir = join(root, "providers", id)
    let provider
    try {
      provider = read(join(dir, "provider.toml"))
    } catch (error) {
      if (error.code === "ENOENT" || error.code === "ENOTDIR") continue
      throw error
    }
    provider.models = {}
    for (const [modelID, path] of tomlFiles(join(dir, "models"))) {
      let model = read(path)
      if (model.base_model !== undefined) {
        const base = facts[model.base_model]
        if (base === undefined) throw new Error(`${path}: unknown base_model ${model.base_model}`)
        const { base_model: _, base_model_omit: omit = [], ...own } = model
        model = mergeDeep(base, own)
        for (const path of omit) omitPath(model, path)
      }
      provider.models[modelID] = model
    }
    providers[id] = provider
  }
  return providers
}

// ---- api.json to the snapshot: only the fields Lathe reads, one fixed-position row per model (it parses fast and
// stays small in memory). Keep in step with `fromApi` in packages/core/src/catalog/models-dev.ts.

const COLUMNS = [
  "name",
  "context",
  "output",
  "input",
  "output_price",
  "cache_read",
  "cache_write",
  "flags",
  "input_kinds",
  "knowledge",
  "release_date"
]
const FLAG = { reasoning: 1, tool_call: 2, attachment: 4, temperature: 8 }
const INPUT_KINDS = ["text", "image", "pdf", "audio", "video"]

const pick = (source, keys) => {
  const out = {}
  for (const k of keys) if (source?.[k] !== undefined) out[k] = source[k]
  return out
}

/** A model's row; an absent `tool_call` or `temperature` counts as true, an absent `reasoning`/`attachment` false. */
const row = (m) => {
  const on = { ...m, tool_call: m.tool_call ?? true, temperature: m.temperature ?? true }
  const input = m.modalities?.input ?? ["text"]
  return [
    m.name,
    m.limit?.context ?? 0,
    m.limit?.output ?? null,
    m.cost?.input ?? null,
    m.cost?.output ?? null,
    m.cost?.cache_read ?? null,
    m.cost?.cache_write ?? null,
    Object.entries(FLAG).reduce((sum, [key, bit]) => sum + (on[key] === true ? bit : 0), 0),
    INPUT_KINDS.reduce((sum, kind, i) => sum + (input.includes(kind) ? 2 ** i : 0), 0),
    m.knowledge ?? null,
    m.release_date ?? null
  ]
}

const sorted = (record) => Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

/** api.json (`providers`) reduced to the snapshot. */
export const compact = (providers) => ({
  columns: COLUMNS,
  providers: sorted(
    Object.fromEntries(
      Object.entries(providers).map(([id, p]) => [
        id,
        {
          ...pick(p, ["name", "env", "npm", "api"]),
          // JSON text, parsed only when Lathe looks at this provider (see CatalogProviderData in models-dev.ts).
          models: JSON.stringify(
            sorted(Object.fromEntries(Object.entries(p.models ?? {}).map(([mid, m]) => [mid, row(m)])))
          )
        }
      ])
    )
  )
})

/** Where `providersModule` goes: the providers' details, for `provider/catalog-provider.ts` (see there why). */
const PROVIDERS_OUT = join(
  dirname(fileURLToPath(import.meta.url)),
  "../packages/core/src/provider/catalog-providers.ts"
)

/**
 * The snapshot's providers without their models (id → [name, npm, api, variables joined by spaces]) as the TypeScript
 * module `packages/core/src/provider/catalog-providers.ts`: one JSON string, parsed on the first look-up of a provider
 * Lathe has no descriptor for (`$` written `\\u0024`: some base URLs name a variable, which is no template
 * placeholder here). `provider-catalog.test.ts` checks it matches snapshot.json.
 */
export const providersModule = (snapshot) => {
  const table = Object.fromEntries(
    Object.entries(snapshot.providers).map(([id, p]) => [
      id,
      [p.name, p.npm ?? "", p.api ?? "", (p.env ?? []).join(" ")]
    ])
  )
  return (
    "// Generated by scripts/models-snapshot.mjs from catalog/snapshot.json: do not edit.\n" +
    "/** The catalogue's providers: id → [name, AI SDK package, API base URL, variables separated by spaces]. */\n" +
    `export const CATALOG_PROVIDERS =\n  '${JSON.stringify(table).replaceAll("\\", "\\\\").replaceAll("'", "\\'").replaceAll("$", "\\u0024")}'\n`
  )
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [first, second] = process.argv.slice(2)
  if (first === undefined || (first === "--api" && second === undefined)) {
    console.error("usage: node scripts/models-snapshot.mjs <models.dev checkout> | --api <api.json>")
    process.exit(2)
  }
  const providers = first === "--api" ? JSON.parse(readFileSync(second, "utf8")) : fromTree(first)
  const snapshot = compact(providers)
  const text = `${JSON.stringify(snapshot)}\n`
  writeFileSync(OUT, text)
  writeFileSync(PROVIDERS_OUT, providersModule(snapshot))
  const models = Object.values(snapshot.providers).reduce((n, p) => n + Object.keys(JSON.parse(p.models)).length, 0)
  console.log(
    `${relative(process.cwd(), OUT)}: ${Object.keys(snapshot.providers).length} providers, ${models} models, ${text.length} bytes`
  )
}
