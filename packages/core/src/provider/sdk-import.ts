/**
 * A provider SDK package that is not installed. `@lathe/core` declares every provider SDK as an optional peer
 * dependency (npm installs none of them), so a library user adds only the ones they use; a descriptor's `load`
 * imports its SDK through `importSDK`, and a missing one ends the step as a `ProviderError` whose reason is
 * `PackageMissing`, naming the package and the command that adds it. The CLI bundle carries every SDK.
 */
export class ProviderPackageMissing extends Error {
  override readonly name = "ProviderPackageMissing"
  /** The npm package to add (`@ai-sdk/anthropic`). */
  readonly packageName: string
  /** The provider that needs it, as people know it ("Anthropic"). */
  readonly providerName: string

  constructor(packageName: string, providerName: string, cause?: unknown) {
    super(
      `${providerName} needs the package ${packageName}, which is not installed: add it next to @lathe/core ` +
        `(npm i ${packageName}).`,
      cause === undefined ? undefined : { cause }
    )
    this.packageName = packageName
    this.providerName = providerName
  }
}

const NOT_FOUND_CODES = new Set(["ERR_MODULE_NOT_FOUND", "MODULE_NOT_FOUND"])

/** Whether `error` says that `packageName` itself (not something inside it) cannot be found. */
const isMissing = (error: unknown, packageName: string): boolean => {
  if (!(error instanceof Error)) return false
  const code = (error as { code?: unknown }).code
  const notFound =
    (typeof code === "string" && NOT_FOUND_CODES.has(code)) || /Cannot find (package|module)/.test(error.message)
  return notFound && (error.message.includes(`'${packageName}'`) || error.message.includes(`"${packageName}"`))
}

/**
 * `load()` (the SDK's `await import("…")`, written out at the call site so bundlers see it), turning "package not
 * found" into `ProviderPackageMissing`; any other failure passes through as it is.
 */
export const importSDK = async <Module>(
  packageName: string,
  providerName: string,
  load: () => Promise<Module>
): Promise<Module> => {
  try {
    return await load()
  } catch (error) {
    if (isMissing(error, packageName)) throw new ProviderPackageMissing(packageName, providerName, error)
    throw error
  }
}
