import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { assert, describe, it } from "vitest"

interface DirectImports {
  readonly rewriteBarrelImports: (
    source: string,
    file: string,
    resolve: (specifier: string, fromDir: string) => Promise<string | undefined>
  ) => Promise<string | undefined>
}

const script = new URL("../scripts/direct-imports.mjs", import.meta.url).href

/** A package `@acme/kit` whose index is a barrel, as Lathe's packages and effect's index are. */
const fixture = () => {
  const dir = mkdtempSync(join(tmpdir(), "lathe-direct-imports-"))
  const src = join(dir, "kit", "src")
  mkdirSync(src, { recursive: true })
  writeFileSync(
    join(src, "index.ts"),
    [
      'export { alpha, renamed as beta } from "./alpha.js"',
      'export * from "./star.js"',
      'export * as Gamma from "./gamma.js"',
      'export type { Shape } from "./alpha.js"',
      "export const own = 1"
    ].join("\n")
  )
  writeFileSync(join(src, "alpha.ts"), "export const alpha = 1\nexport const renamed = 2\nexport type Shape = {}\n")
  writeFileSync(join(src, "star.ts"), 'export function delta() {}\nexport { epsilon } from "./epsilon.js"\n')
  writeFileSync(join(src, "epsilon.ts"), "export class epsilon {}\n")
  writeFileSync(join(src, "gamma.ts"), "export const g = 1\n")
  const resolveIn = async (specifier: string, fromDir: string) =>
    specifier === "@acme/kit" ? join(src, "index.ts") : resolve(fromDir, specifier.replace(/\.js$/, ".ts"))
  return { src, file: join(dir, "user.ts"), resolve: resolveIn }
}

describe("the run build's direct imports", () => {
  it("takes each name from its defining module: re-exports, export *, namespaces; types dropped; own names kept", async () => {
    const { rewriteBarrelImports } = (await import(script)) as DirectImports
    const { src, file, resolve: resolveIn } = fixture()
    // The fixture poses as "@lathe/core" (the specifiers taken are Lathe's packages and effect).
    const source = [
      'import { alpha, beta as b, delta, epsilon, Gamma, own, type Shape } from "@lathe/core"',
      "export const use = [alpha, b, delta, epsilon, Gamma, own]"
    ].join("\n")
    const out = await rewriteBarrelImports(source, file, (specifier, fromDir) =>
      resolveIn(specifier === "@lathe/core" ? "@acme/kit" : specifier, fromDir)
    )
    const at = (name: string) => JSON.stringify(join(src, name))
    assert.strictEqual(
      out,
      [
        `import { own } from "@lathe/core"; import { alpha } from ${at("alpha.ts")}; import { renamed as b } from ${at("alpha.ts")}; ` +
          `import { delta } from ${at("star.ts")}; import { epsilon } from ${at("epsilon.ts")}; import * as Gamma from ${at("gamma.ts")};`,
        "export const use = [alpha, b, delta, epsilon, Gamma, own]"
      ].join("\n")
    )
  })

  it("leaves a file alone when it imports no barrel, only types, or a name it cannot find", async () => {
    const { rewriteBarrelImports } = (await import(script)) as DirectImports
    const { file, resolve: resolveIn } = fixture()
    const kit = (specifier: string, fromDir: string) =>
      resolveIn(specifier === "@lathe/core" ? "@acme/kit" : specifier, fromDir)
    assert.isUndefined(await rewriteBarrelImports('import { x } from "./local.js"\n', file, kit))
    assert.isUndefined(await rewriteBarrelImports('import type { Shape } from "@lathe/core"\n', file, kit))
    assert.isUndefined(await rewriteBarrelImports('import { missing } from "@lathe/core"\n', file, kit))
    assert.isUndefined(await rewriteBarrelImports('import * as kit from "@lathe/core"\n', file, kit))
  })
})
