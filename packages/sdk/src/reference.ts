import { OpenApi } from "effect/http-api"
import { LatheApi } from "./api.js"

/**
 * The API reference in Markdown, generated from the OpenAPI document of `LatheApi` (so it cannot drift from the
 * server): one section per route with its parameters, body, answers and errors, each schema as a compact
 * TypeScript-like type. `docs/server-api.md` is this text; a test checks it is current.
 */

type Json = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null

/** A compact TypeScript-like rendering of a JSON Schema; `depth` limits how far nested objects are spelled out. */
export const typeOf = (schema: unknown, depth = 0): string => {
  if (!isObject(schema)) return "unknown"
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ")
  if ("const" in schema) return JSON.stringify(schema.const)
  const union = (schema.anyOf ?? schema.oneOf) as ReadonlyArray<unknown> | undefined
  if (Array.isArray(union)) {
    // effect encodes non-finite numbers as strings: show them as number.
    const members = union.filter((m) => !(isObject(m) && Array.isArray(m.enum) && m.enum.includes("NaN")))
    const types = [...new Set(members.map((m) => typeOf(m, depth)))]
    return types.length > 6 ? `one of ${types.length} shapes` : types.join(" | ")
  }
  if (schema.contentMediaType === "application/json" && schema.contentSchema !== undefined)
    return `JSON text of ${typeOf(schema.contentSchema, depth)}`
  switch (schema.type) {
    case "string":
    case "number":
    case "boolean":
    case "null":
      return schema.type
    case "integer":
      return "number"
    case "array":
      return `Array<${typeOf(schema.items, depth + 1)}>`
    case "object": {
      const properties = isObject(schema.properties) ? schema.properties : {}
      const keys = Object.keys(properties)
      if (keys.length === 0)
        return isObject(schema.additionalProperties)
          ? `Record<string, ${typeOf(schema.additionalProperties, depth + 1)}>`
          : "object"
      if (depth >= 2) return "{ … }"
      const required = new Set(Array.isArray(schema.required) ? (schema.required as ReadonlyArray<string>) : [])
      const fields = keys.map((key) => `${key}${required.has(key) ? "" : "?"}: ${typeOf(properties[key], depth + 1)}`)
      return `{ ${fields.join("; ")} }`
    }
    default:
      return "unknown"
  }
}

const STATUS_TEXT: Readonly<Record<string, string>> = {
  "200": "OK",
  "201": "Created",
  "202": "Accepted",
  "204": "No Content",
  "400": "Bad Request",
  "401": "Unauthorized",
  "404": "Not Found",
  "409": "Conflict",
  "500": "Server Error",
  "503": "Unavailable"
}

const contentSchema = (entry: unknown): { readonly type: string; readonly schema: unknown } | undefined => {
  if (!isObject(entry) || !isObject(entry.content)) return undefined
  const [type, media] = Object.entries(entry.content)[0] ?? []
  return type === undefined || !isObject(media) ? undefined : { type, schema: media.schema }
}

const errorCode = (schema: unknown): string | undefined => {
  const error = isObject(schema) && isObject(schema.properties) ? schema.properties.error : undefined
  const code = isObject(error) && isObject(error.properties) ? error.properties.code : undefined
  return isObject(code) && Array.isArray(code.enum) ? String(code.enum[0]) : undefined
}

/** The Markdown reference of every route. */
export const apiReference = (): string => {
  const doc = OpenApi.fromApi(LatheApi) as unknown as { paths: Record<string, Record<string, Json>> }
  const lines: Array<string> = [
    "# Lathe server API reference",
    "",
    "Generated from the OpenAPI document of `@lathe/sdk`'s `LatheApi` (`npm run docs:api` rewrites this file; a test",
    "fails when it is stale). The same document is served at `GET /openapi.json`. Types are written TypeScript-style;",
    "`?` marks an optional field. Every error body is `{ error: { code, message } }`. See [server.md](server.md) for",
    "auth, events and examples.",
    "",
    "Before any route, every request passes the server's walls, in this order: `Host` must name the server",
    "(`localhost`, `127.0.0.1`, `[::1]`, its `--hostname` or an `--allow-host` name), else 421 `misdirected`; an",
    "`Origin` must be one given with `--cors`, else 403 `forbidden`; `Authorization: Bearer <token>` must carry the",
    "server's token, else 401 `unauthorized`; a request body must be `Content-Type: application/json`, else 415",
    "`unsupported_media_type`, and at most 10 MB, else 413 `payload_too_large` (a `Content-Length` over the cap is",
    "refused before any of the body is read; a chunked body is cut off when it passes the cap).",
    ""
  ]
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      lines.push(`## \`${method.toUpperCase()} ${path}\``, "")
      if (typeof operation.description === "string") lines.push(operation.description, "")
      const parameters = Array.isArray(operation.parameters) ? (operation.parameters as ReadonlyArray<Json>) : []
      for (const parameter of parameters)
        lines.push(
          `- ${parameter.in} \`${String(parameter.name)}\`${parameter.required ? "" : " (optional)"}: ${typeOf(parameter.schema)}`
        )
      const body = contentSchema(operation.requestBody)
      if (body) lines.push(`- body (${body.type}): \`${typeOf(body.schema)}\``)
      const responses = isObject(operation.responses) ? operation.responses : {}
      const errors: Array<string> = []
      for (const [status, response] of Object.entries(responses)) {
        const content = contentSchema(response)
        const code = errorCode(content?.schema)
        if (code !== undefined) errors.push(`${status} \`${code}\``)
        else
          lines.push(
            `- **${status} ${STATUS_TEXT[status] ?? ""}**${content ? ` (${content.type}): \`${typeOf(content.schema)}\`` : ""}`
          )
      }
      if (errors.length > 0) lines.push(`- errors: ${errors.join(", ")}`)
      lines.push("")
    }
  }
  return `${lines.join("\n").trimEnd()}\n`
}
