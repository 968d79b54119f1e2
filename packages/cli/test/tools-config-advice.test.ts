// The snippets the tools print (bash's sandbox notices and refusals, webfetch's private-host refusal, `lathe doctor`'s
// sandbox line) are the tools' own (`toolsConfigAdvice`), over sections of the host's config: a test of the two
// together, so it lives with the CLI, the one package that knows both. Core's test does the same for its own snippets.
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Config, type ConfigShape, Paths } from "@lathe/core"
import { renderSnippet } from "@lathe/plugin"
import { type ToolsConfigAdviceName, toolsConfigAdviceExamples } from "@lathe/tools"
import { Effect, Layer } from "effect"

/** Loads `text` as the person's own lathe.json, the way a run does (`Config.layerWith` on real files). */
const load = (text: string) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-tools-advice-")))
  for (const dir of ["project", "global", "data"]) mkdirSync(join(base, dir))
  writeFileSync(join(base, "global", "lathe.json"), text)
  const paths = Paths.layerTest(join(base, "project"), {
    config: join(base, "global"),
    data: join(base, "data"),
    home: base
  })
  return Effect.gen(function* () {
    return yield* Config
  }).pipe(Effect.provide(Config.layerWith({}).pipe(Layer.provide(paths))))
}

/** What each snippet says it does, checked on the config it was loaded into. */
const effects: { readonly [K in ToolsConfigAdviceName]: (config: ConfigShape, snippet: unknown) => void } = {
  webfetchPrivateHost: (config) =>
    assert.deepStrictEqual(config.info.webfetch?.allow_private_hosts, ["127.0.0.1:8080"]),
  sandboxRequired: (config) => assert.strictEqual(config.info.sandbox?.required, true),
  sandboxNetwork: (config, snippet) =>
    assert.deepStrictEqual(config.info.sandbox?.network, (snippet as { sandbox: { network: unknown } }).sandbox.network)
}

describe("every config snippet the tools print loads and does what it says", () => {
  for (const [name, examples] of Object.entries(toolsConfigAdviceExamples) as Array<
    [ToolsConfigAdviceName, ReadonlyArray<unknown>]
  >)
    for (const [index, snippet] of examples.entries())
      it.effect(`${name} #${index + 1}: ${renderSnippet(snippet)}`, () =>
        Effect.gen(function* () {
          const printed = renderSnippet(snippet)
          effects[name](yield* load(printed), snippet)
          assert.deepStrictEqual(JSON.parse(printed), snippet, "the printed text is the snippet")
        })
      )
})
