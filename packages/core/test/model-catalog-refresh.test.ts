import { existsSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { readCatalogFile, writeCatalogFile } from "../src/catalog/catalog-file.js"
import { ModelCatalog, type ModelCatalogOptions, REFRESH_INTERVAL_MS } from "../src/catalog/model-catalog.js"
import { catalogFile, readCachedCatalog } from "../src/catalog/refresh.js"
import { Config } from "../src/config/config.js"
import { stripUntrusted } from "../src/config/config-untrusted.js"

/** models.dev's api.json shape, with fields Lathe does not keep (`id`, `doc`, `open_weights`, `family`). */
const apiJson = {
  acme: {
    id: "acme",
    name: "Acme AI",
    env: ["ACME_API_KEY"],
    npm: "@ai-sdk/openai-compatible",
    api: "https://api.acme.test/v1",
    doc: "https://acme.test/docs",
    models: {
      "acme-coder-9": {
        id: "acme-coder-9",
        name: "Acme Coder 9",
        family: "acme",
        attachment: false,
        reasoning: true,
        tool_call: true,
        temperature: true,
        open_weights: false,
        release_date: "2026-01-02",
        last_updated: "2026-01-02",
        modalities: { input: ["text"], output: ["text"] },
        cost: { input: 0.7, output: 2.8, cache_read: 0.07 },
        limit: { context: 777_000, output: 55_000 }
      }
    }
  }
}

/** A catalogue server on 127.0.0.1 that answers `body` (or `status`) and counts its requests. */
const serve = (answer: { readonly status?: number; readonly body?: string }) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ readonly server: Server; readonly url: string; readonly requests: () => number }>((resolve) => {
          let requests = 0
          const server = createServer((_req, res) => {
            requests++
            res.writeHead(answer.status ?? 200, { "content-type": "application/json" })
            res.end(answer.body ?? JSON.stringify(apiJson))
          })
          server.listen(0, "127.0.0.1", () => {
            const { port } = server.address() as AddressInfo
            resolve({ server, url: `http://127.0.0.1:${port}/api.json`, requests: () => requests })
          })
        })
    ),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

const dataDir = () => mkdtempSync(join(tmpdir(), "lathe-catalog-refresh-"))

/** Runs `effect` on a catalogue with `options` (a fresh one each time: a new run of Lathe). */
const onCatalog = <A, E>(options: ModelCatalogOptions, effect: Effect.Effect<A, E, ModelCatalog>) =>
  effect.pipe(Effect.provide(ModelCatalog.layerTest(options)))

/** Calls one method of the catalogue. */
const withService = <A>(f: (catalog: ModelCatalog["Service"]) => Effect.Effect<A>) =>
  Effect.gen(function* () {
    return yield* f(yield* ModelCatalog)
  })

/** Waits (on the real clock) until `done` holds, up to 5 s. */
const until = (done: () => boolean) =>
  Effect.promise(async () => {
    for (let i = 0; i < 250 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20))
  })

describe("ModelCatalog refresh", () => {
  it.effect("downloads into the data directory, and the next run uses that copy", () =>
    Effect.gen(function* () {
      const { url, requests } = yield* serve({})
      const options = { dataDir: dataDir(), url, refresh: true }
      const outcome = yield* onCatalog(
        options,
        withService((c) => c.refresh())
      )
      assert.strictEqual(outcome.status, "updated")
      assert.strictEqual(requests(), 1)
      // Only the fields Lathe reads, one row per model, in the catalogue file format.
      const written = readCatalogFile(readFileSync(catalogFile(options.dataDir)))
      assert.deepStrictEqual(Object.keys(written.providers.acme ?? {}).sort(), [
        "api",
        "env",
        "ids",
        "models",
        "name",
        "npm"
      ])
      assert.strictEqual(written.providers.acme?.ids, "acme-coder-9")
      assert.deepStrictEqual(JSON.parse(written.providers.acme?.models ?? "{}")["acme-coder-9"], [
        "Acme Coder 9",
        777_000,
        55_000,
        0.7,
        2.8,
        0.07,
        null,
        11,
        1,
        null,
        "2026-01-02"
      ])
      // The next run (a new catalogue on the same data directory) reads the copy, and sends nothing.
      const next = yield* onCatalog(
        { ...options, refresh: false },
        Effect.gen(function* () {
          const catalog = yield* ModelCatalog
          return {
            entry: yield* catalog.lookup("acme", "acme-coder-9"),
            providers: yield* catalog.providers()
          }
        })
      )
      assert.deepStrictEqual(next.entry?.limit, { context: 777_000, output: 55_000 })
      assert.deepStrictEqual(next.entry?.cost, { input: 0.7, output: 2.8, cacheRead: 0.07, cacheWrite: 0 })
      assert.deepStrictEqual(
        next.providers.map((p) => p.id),
        ["acme"]
      )
      assert.strictEqual(requests(), 1)
    }).pipe(Effect.scoped)
  )

  it.effect("a failing or malformed server leaves the shipped snapshot in use and writes no copy", () =>
    Effect.gen(function* () {
      for (const answer of [
        { status: 503, body: "down" },
        { body: '{"acme":{"models":"nope"}}' },
        { body: "<html>" }
      ]) {
        const { url, requests } = yield* serve(answer)
        const options = { dataDir: dataDir(), url, refresh: true }
        const result = yield* onCatalog(
          options,
          Effect.gen(function* () {
            const catalog = yield* ModelCatalog
            const outcome = yield* catalog.refresh()
            return { outcome, sonnet: yield* catalog.lookup("anthropic", "claude-sonnet-4-5") }
          })
        )
        assert.strictEqual(result.outcome.status, "failed", answer.body)
        assert.strictEqual(requests(), 1)
        assert.isFalse(existsSync(catalogFile(options.dataDir)))
        assert.strictEqual(result.sonnet?.limit.context, 200_000, "the shipped snapshot answers")
        const after = yield* onCatalog(
          options,
          withService((c) => c.lookup("acme", "acme-coder-9"))
        )
        assert.isUndefined(after)
      }
    }).pipe(Effect.scoped)
  )

  it.effect("after the first request it refreshes once, in the background; at most daily", () =>
    Effect.gen(function* () {
      const { url, requests } = yield* serve({})
      const options = { dataDir: dataDir(), url, refresh: true }
      yield* onCatalog(
        options,
        Effect.gen(function* () {
          const catalog = yield* ModelCatalog
          assert.strictEqual(requests(), 0, "nothing before a request")
          yield* catalog.afterRequest()
          yield* catalog.afterRequest()
          yield* until(() => existsSync(catalogFile(options.dataDir)))
          assert.strictEqual(requests(), 1)
        })
      )
      // A new run within the day: the first request triggers nothing.
      const second = yield* onCatalog(
        options,
        Effect.gen(function* () {
          const catalog = yield* ModelCatalog
          return yield* catalog.refresh()
        })
      )
      assert.strictEqual(second.status, "recent")
      assert.strictEqual(requests(), 1)
      // A day later it downloads again.
      yield* TestClock.adjust(REFRESH_INTERVAL_MS + 1)
      const third = yield* onCatalog(
        options,
        withService((c) => c.refresh())
      )
      assert.strictEqual(third.status, "updated")
      assert.strictEqual(requests(), 2)
    }).pipe(Effect.scoped)
  )

  it.effect('config "models": { "refresh": false } sends the server no request', () =>
    Effect.gen(function* () {
      const { url, requests } = yield* serve({})
      const dir = dataDir()
      const layer = ModelCatalog.layerWith({ LATHE_DATA_DIR: dir, LATHE_MODELS_URL: url }).pipe(
        Layer.provide(Config.layerTest({ models: { refresh: false } }))
      )
      const outcome = yield* Effect.gen(function* () {
        const catalog = yield* ModelCatalog
        yield* catalog.afterRequest()
        return yield* catalog.refresh()
      }).pipe(Effect.provide(layer))
      assert.strictEqual(outcome.status, "off")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
      assert.strictEqual(requests(), 0)
      assert.isFalse(existsSync(catalogFile(dir)))
      // `lathe models --refresh` asks explicitly: that one goes through.
      const forced = yield* withService((c) => c.refresh({ force: true })).pipe(Effect.provide(layer))
      assert.strictEqual(forced.status, "updated")
      assert.strictEqual(requests(), 1)
    }).pipe(Effect.scoped)
  )

  it("an untrusted project may turn the refresh off, never point it at its own server", () => {
    const { value, dropped } = stripUntrusted({ models: { refresh: false, url: "https://evil.test/api.json" } })
    assert.deepStrictEqual(value, { models: { refresh: false } })
    assert.deepStrictEqual(dropped, ["models.url"])
    assert.deepStrictEqual(stripUntrusted({ models: { refresh: true } }).value, { models: {} })
  })

  it.effect("a data-dir copy that does not validate is ignored: the shipped snapshot answers", () =>
    Effect.gen(function* () {
      const dir = dataDir()
      const bad = { columns: [], providers: { acme: { name: "Acme", models: JSON.stringify({ x: ["X", "big"] }) } } }
      // In the file format, but no refresh recorded it: validated in full, and a row does not fit.
      writeFileSync(catalogFile(dir), writeCatalogFile(bad))
      const options = { dataDir: dir, url: "http://127.0.0.1:9/api.json", refresh: false }
      const found = yield* onCatalog(
        options,
        withService((c) => c.lookup("anthropic", "claude-sonnet-4-5"))
      )
      assert.strictEqual(found?.limit.context, 200_000)
    })
  )
  it.effect("the copy the refresh recorded is read lazily; a copy changed after it is validated in full", () =>
    Effect.gen(function* () {
      const { url } = yield* serve({})
      const dir = dataDir()
      // A copy from a version before the file format: removed by the refresh.
      writeFileSync(join(dir, "models.json"), "{}")
      const outcome = yield* onCatalog(
        { dataDir: dir, url, refresh: true },
        withService((c) => c.refresh())
      )
      assert.strictEqual(outcome.status, "updated")
      assert.isFalse(existsSync(join(dir, "models.json")))
      // As the refresh left it: taken as written, each provider's rows still bytes until looked at.
      const kept = yield* Effect.promise(() => readCachedCatalog(dir))
      const acme = kept?.providers.acme
      if (acme === undefined) throw new Error("the refreshed copy was not read")
      assert.isFunction(Object.getOwnPropertyDescriptor(acme, "models")?.get, "not decoded before it is looked at")
      assert.deepStrictEqual(JSON.parse(acme.models)["acme-coder-9"]?.[1], 777_000)
      // Changed after the refresh (a row that does not fit, same size): no longer the recorded file, so validated,
      // and refused: the shipped snapshot answers.
      const file = catalogFile(dir)
      const text = readFileSync(file, "utf8")
      writeFileSync(file, text.replace("777000", '"7700"'))
      utimesSync(file, new Date(), new Date(Date.now() + 5_000))
      assert.isUndefined(yield* Effect.promise(() => readCachedCatalog(dir)))
      const found = yield* onCatalog(
        { dataDir: dir, url, refresh: false },
        withService((c) => c.lookup("anthropic", "claude-sonnet-4-5"))
      )
      assert.strictEqual(found?.limit.context, 200_000)
    }).pipe(Effect.scoped)
  )
})
