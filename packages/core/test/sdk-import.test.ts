/**
 * A provider SDK that is not installed (core lists the SDKs as optional peer dependencies): the descriptor's `load`
 * fails with `ProviderPackageMissing`, which the provider error path turns into a `PackageMissing` reason naming the
 * package and the command that adds it, never retried. A real `import()` of a package that is not there, and of one
 * that is; a failure inside an installed package is not mistaken for a missing one.
 */
import { assert, describe, it } from "@effect/vitest"
import { toProviderError } from "../src/llm/provider-error.js"
import { isRetryable } from "../src/loop/retry.js"
import { importSDK, ProviderPackageMissing } from "../src/provider/sdk-import.js"

const MISSING = "@ai-sdk/not-installed-here"

describe("importSDK", () => {
  it("a package that is not installed is ProviderPackageMissing, naming it and `npm i`", async () => {
    const error = await importSDK(MISSING, "Nowhere AI", () => import(/* @vite-ignore */ MISSING)).then(
      () => assert.fail("the import should fail"),
      (error: unknown) => error
    )
    assert.instanceOf(error, ProviderPackageMissing)
    const missing = error as ProviderPackageMissing
    assert.strictEqual(missing.packageName, MISSING)
    assert.include(missing.message, `Nowhere AI needs the package ${MISSING}`)
    assert.include(missing.message, `npm i ${MISSING}`)
  })

  it("an installed package loads as it is", async () => {
    const module = await importSDK("@ai-sdk/openai", "OpenAI", () => import("@ai-sdk/openai"))
    assert.isFunction(module.createOpenAI)
  })

  it("any other failure passes through unchanged", async () => {
    const inner = Object.assign(new Error("Cannot find module './chunk.js' imported from '@ai-sdk/openai'"), {
      code: "ERR_MODULE_NOT_FOUND"
    })
    const error = await importSDK("@ai-sdk/anthropic", "Anthropic", () => Promise.reject(inner)).catch((e) => e)
    assert.strictEqual(error, inner)
  })

  it("becomes a ProviderError with reason PackageMissing, not retried", () => {
    const error = toProviderError(new ProviderPackageMissing("@ai-sdk/anthropic", "Anthropic"), "anthropic", "claude")
    assert.deepStrictEqual(error.reason, { _tag: "PackageMissing", package: "@ai-sdk/anthropic" })
    assert.strictEqual(
      error.message,
      "Anthropic needs the package @ai-sdk/anthropic, which is not installed: add it next to @lathe/core " +
        "(npm i @ai-sdk/anthropic)."
    )
    assert.isFalse(isRetryable(error))
  })
})
