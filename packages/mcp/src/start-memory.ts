// Which local server commands have started on this machine before, and the tools they listed then: a package runner's
// first start (`npx -y`, `uvx`, … with nothing cached yet) downloads the server first, so it gets a longer timeout;
// the remembered tool names let a prompt that names one of them wait for its server.
import { createHash } from "node:crypto"
import { mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { basename, join } from "node:path"
import { z } from "zod"
import type { McpServer } from "./servers.js"

/** The first start's timeout of a package runner's server that never started here before, in ms (at least). */
export const FIRST_START_TIMEOUT_MS = 60_000

/** At most this many tool names are remembered per command. */
const MAX_REMEMBERED_TOOLS = 200

/** Programs that fetch what they run on its first use, and the arguments that make them do it (none: always). */
const RUNNERS: Readonly<Record<string, ReadonlyArray<ReadonlyArray<string>>>> = {
  npx: [[]],
  pnpx: [[]],
  bunx: [[]],
  uvx: [[]],
  pnpm: [["dlx"]],
  yarn: [["dlx"]],
  bun: [["x"]],
  npm: [["exec"], ["x"]],
  uv: [["tool", "run"]],
  pipx: [["run"]],
  docker: [["run"]],
  podman: [["run"]]
}

/**
 * Whether a server's command fetches the server on its first use (`npx -y pkg`, `bunx`, `pnpm dlx`, `uvx`, `npm exec`,
 * `pipx run`, `docker run`): its first start on a machine can take far longer than the next ones.
 */
export const isPackageRunner = (server: McpServer): boolean => {
  if (server.type !== "local") return false
  const program = basename(server.command)
    .toLowerCase()
    .replace(/\.(cmd|exe|bat)$/, "")
  return (RUNNERS[program] ?? []).some((prefix) => prefix.every((word, index) => server.args[index] === word))
}

/** A server's command as a key of the memory: a hash, so no argument (a token) is written to disk. */
export const commandKey = (server: McpServer): string =>
  createHash("sha256")
    .update(JSON.stringify(server.type === "local" ? [server.command, ...server.args] : [server.url]))
    .digest("hex")
    .slice(0, 32)

const MemoryFile = z.object({
  commands: z.record(z.string(), z.object({ tools: z.array(z.string()).max(MAX_REMEMBERED_TOOLS) }))
})

/** What this machine remembers of server commands that started before (see {@link openStartMemory}). */
export interface StartMemory {
  /** Whether the server's command connected here before. */
  readonly startedBefore: (server: McpServer) => boolean
  /** The server tool names (as the server names them) its command listed last time; empty when never started. */
  readonly tools: (server: McpServer) => ReadonlyArray<string>
  /** Records that the server connected with these tools; writes the file only when something changed. */
  readonly remember: (server: McpServer, tools: ReadonlyArray<string>) => Promise<void>
}

/** The memory's file in the data dir. */
export const startMemoryFile = (dataDir: string): string => join(dataDir, "mcp-started.json")

/**
 * Reads the memory of `<dataDir>/mcp-started.json` (a missing or unreadable file is an empty memory). Writes go to a
 * temporary file renamed over it; two runs writing at once lose at most an entry, which costs only a longer timeout.
 */
export const openStartMemory = async (dataDir: string): Promise<StartMemory> => {
  const file = startMemoryFile(dataDir)
  const commands = new Map<string, ReadonlyArray<string>>()
  /** Writes of this process, one after another (they share the temporary file). */
  let writing: Promise<void> = Promise.resolve()
  try {
    const parsed = MemoryFile.safeParse(JSON.parse(await readFile(file, "utf8")))
    if (parsed.success) for (const [key, entry] of Object.entries(parsed.data.commands)) commands.set(key, entry.tools)
  } catch {
    // No memory yet, or a broken one: every package runner gets its first-start timeout once more.
  }
  return {
    startedBefore: (server) => commands.has(commandKey(server)),
    tools: (server) => commands.get(commandKey(server)) ?? [],
    remember: async (server, tools) => {
      const key = commandKey(server)
      const names = tools.slice(0, MAX_REMEMBERED_TOOLS)
      const known = commands.get(key)
      if (known !== undefined && known.length === names.length && known.every((name, i) => name === names[i])) return
      commands.set(key, names)
      const text = JSON.stringify({ commands: Object.fromEntries([...commands].map(([k, t]) => [k, { tools: t }])) })
      const temporary = `${file}.${process.pid}.tmp`
      writing = writing.then(async () => {
        try {
          await mkdir(dataDir, { recursive: true })
          await writeFile(temporary, text, { mode: 0o600 })
          await rename(temporary, file)
        } catch {
          // Not remembered: the next start is treated as a first one again.
        }
      })
      await writing
    }
  }
}

/**
 * The timeout of a server's first start in this process: a package runner's command that never connected on this
 * machine gets at least {@link FIRST_START_TIMEOUT_MS}; every other start keeps the server's `timeout`.
 */
export const firstStartTimeout = (server: McpServer, memory: Pick<StartMemory, "startedBefore">): number =>
  isPackageRunner(server) && !memory.startedBefore(server)
    ? Math.max(server.timeout, FIRST_START_TIMEOUT_MS)
    : server.timeout
