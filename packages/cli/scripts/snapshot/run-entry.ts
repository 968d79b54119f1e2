// Step 2 of the startup-snapshot experiment: the CLI's `main` as a V8 startup snapshot entry. Bundled to one CJS
// script (build.mjs), it evaluates the whole `lathe run` path while the snapshot is built — the run command, the
// app layer with core, the built-in plugins, effect, zod, ai and the OpenAI-compatible provider — and sets the
// deserialize-main function to what `src/bin.ts` does, with the arguments after the blob. Run directly with node
// (no snapshot), it behaves as bin.ts. Not part of the CLI; see docs/startup-snapshot.md.
import { startupSnapshot } from "node:v8"
import * as openaiCompatible from "@ai-sdk/openai-compatible"
import "../../src/commands/run.js" // main.ts imports it lazily: the same
import { main } from "../../src/main.js"

// llm.ts imports the provider lazily: keep a reference, so it is evaluated now and the snapshot holds it.
;(globalThis as { __latheSnapshotPreload?: unknown }).__latheSnapshotPreload = openaiCompatible

/** The snapshot's main: `lathe <argv>`, with the process's real streams, env and cwd (as src/bin.ts). */
const start = async (argv: ReadonlyArray<string>): Promise<void> => {
  process.exitCode = await main(argv, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    isTTY: Boolean(process.stdout.isTTY),
    stdin: process.stdin,
    stdinIsTTY: Boolean(process.stdin.isTTY),
    onInterrupt: (handler) => {
      process.on("SIGINT", handler)
      process.on("SIGTERM", handler)
      return () => {
        process.off("SIGINT", handler)
        process.off("SIGTERM", handler)
      }
    }
  })
}

// From a snapshot, process.argv is [node, ...arguments after the blob]: there is no script path in it.
if (startupSnapshot.isBuildingSnapshot())
  startupSnapshot.setDeserializeMainFunction(() => void start(process.argv.slice(1)))
else void start(process.argv.slice(2))
