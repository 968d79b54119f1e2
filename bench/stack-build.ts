/**
 * Bundles the stack agent (`bench/stack-agent.ts`: the session on Effect, the AI SDK, zod and `node:sqlite`, nothing
 * of Lathe's own) as the CLI bundles its run build: `stack-agent.cjs`, one minified CommonJS file with the same esbuild
 * plugins (`bundleOptions` of packages/cli/scripts/bundle.mjs), and `stack-launch.js`, which loads it with a V8 code
 * cache as `lathe run` loads run.cjs. Returns the launcher's path, a build `bench/startup-faults.ts` can run.
 */
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
// @ts-expect-error: the CLI's bundle script is plain JavaScript without declarations.
import { bundleOptions } from "../packages/cli/scripts/bundle.mjs"

const here = fileURLToPath(new URL(".", import.meta.url))

interface Plugin {
  readonly name: string
}

export const buildStackAgent = async (outdir: string): Promise<string> => {
  const agent = bundleOptions({ entryPoints: { "stack-agent": join(here, "stack-agent.ts") }, outdir })
  await build({
    ...agent,
    format: "cjs",
    splitting: false,
    outExtension: { ".js": ".cjs" },
    banner: {},
    // CommonJS output `require`s built-ins: as the run build, without the plugin that builds their namespaces.
    plugins: agent.plugins.filter((plugin: Plugin) => plugin.name !== "builtins-without-namespace"),
    metafile: false
  })
  await build({
    ...bundleOptions({ entryPoints: { "stack-launch": join(here, "stack-launch.ts") }, outdir }),
    metafile: false
  })
  return join(outdir, "stack-launch.js")
}
