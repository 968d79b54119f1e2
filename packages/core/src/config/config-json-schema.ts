import { z } from "zod"
import { ConfigFile } from "./config-schema.js"

/** Where the schema says it lives: the copy the published CLI ships (`dist/bundle/lathe.schema.json`). */
export const CONFIG_SCHEMA_URL = "https://unpkg.com/@lathe/cli/dist/bundle/lathe.schema.json"

type Schema = z.core.$ZodType

const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && "_zod" in value && typeof value._zod === "object"

/**
 * A copy of `schema` whose every node is a plain zod schema. The config schemas stand behind proxies until first use
 * (`lazySchema` in config-schema.ts), and zod's JSON Schema generator keys what it has seen by the object it was
 * handed: a proxy there, the real schema inside the processors of wrappers (a pipe such as `ModelConfig`'s transform),
 * so it fails on them. Each node is rebuilt from its definition (its checks, transforms and messages with it), with
 * the schemas the definition holds (directly, in an array, or in an object's shape) rebuilt the same way; a node met
 * twice is rebuilt once.
 */
const unproxied = (schema: Schema, done = new Map<Schema, Schema>()): Schema => {
  const seen = done.get(schema)
  if (seen !== undefined) return seen
  const rebuild = (value: unknown): unknown => {
    if (isSchema(value)) return unproxied(value, done)
    if (Array.isArray(value)) return value.some(isSchema) ? value.map(rebuild) : value
    if (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
      const entries = Object.entries(value)
      return entries.some(([, inner]) => isSchema(inner))
        ? Object.fromEntries(entries.map(([key, inner]) => [key, rebuild(inner)]))
        : value
    }
    return value
  }
  // `checks` are check objects (they carry `_zod` too), not schemas to rebuild.
  const rebuilt = Object.fromEntries(
    Object.entries(schema._zod.def).map(([key, value]) => [key, key === "checks" ? value : rebuild(value)])
  )
  const copy = z.core.clone(schema, { ...schema._zod.def, ...rebuilt })
  done.set(schema, copy)
  return copy
}

/**
 * The formats JSON Schema defines (draft 2020-12). zod names some checks with a `format` of its own (`includes`, next
 * to the `pattern` that does the checking): validators in strict mode refuse an unknown format, so those are left out.
 */
const JSON_SCHEMA_FORMATS = new Set([
  "date-time",
  "date",
  "time",
  "duration",
  "email",
  "idn-email",
  "hostname",
  "idn-hostname",
  "ipv4",
  "ipv6",
  "uri",
  "uri-reference",
  "iri",
  "iri-reference",
  "uuid",
  "uri-template",
  "json-pointer",
  "relative-json-pointer",
  "regex"
])

/**
 * The JSON Schema (draft 2020-12) of `lathe.json` / `lathe.jsonc`, generated from the zod schema the config loader
 * validates with, so it can never say something the loader does not: what a person may write (the input side of
 * transforms), unknown keys refused wherever the loader refuses them. Editors take it through the file's `"$schema"`.
 */
export const configJsonSchema = (): Record<string, unknown> => {
  const generated = z.toJSONSchema(unproxied(ConfigFile), {
    io: "input",
    target: "draft-2020-12",
    override: ({ jsonSchema }) => {
      if (typeof jsonSchema.format === "string" && !JSON_SCHEMA_FORMATS.has(jsonSchema.format)) delete jsonSchema.format
    }
  })
  const { $schema, ...rest } = generated
  return {
    $schema,
    $id: CONFIG_SCHEMA_URL,
    title: "Lathe configuration (lathe.json)",
    ...rest
  }
}
