import { defineCommand, parseCommand } from "../command-kit.js"
import type { CliIO } from "../io.js"

/** `lathe acp`, declared once for the command kit. */
export const acpSpec = defineCommand({
  name: "acp",
  description: `Speaks the Agent Client Protocol (ACP) on stdin and stdout, for an editor that hosts Lathe as its agent:
Zed, JetBrains IDEs, Neovim (see docs/editors.md). The editor starts it; a person does not run it by hand. Sessions
run in the folder the editor names, with that folder's config, trust, permission rules and sandbox, as \`lathe\` there;
every permission ask goes to the editor. stdout carries only protocol messages; logs and notices go to stderr.`
})

/**
 * `lathe acp`: the protocol on this process's stdio. The SDK and the agent's services load here, not before: no other
 * command pays for them.
 */
export const acpCommand = async (args: ReadonlyArray<string>, io: CliIO): Promise<number> => {
  const parsed = parseCommand(acpSpec, args, io)
  if (typeof parsed === "number") return parsed
  // Loaded here, not at the top: `lathe completion` reads this module's spec and loads none of them.
  const [{ Readable }, { ndJsonStream }, { serveAcp }] = await Promise.all([
    import("node:stream"),
    import("@agentclientprotocol/sdk"),
    import("../acp/agent.js")
  ])
  // Protocol messages are the only writes through `io.stdout` (the launcher already sends everything else this
  // process writes to stdout, a plugin's console.log among it, to stderr); the agent gets `io.stderr` for both.
  const decoder = new TextDecoder()
  const output = new WritableStream<Uint8Array>({
    write: (bytes) => io.stdout(decoder.decode(bytes, { stream: true }))
  })
  const stdin = io.stdin ?? process.stdin
  const input = Readable.toWeb(stdin as InstanceType<typeof Readable>) as unknown as ReadableStream<Uint8Array>
  await serveAcp({ ...io, stdout: io.stderr }, ndJsonStream(output, input))
  return 0
}
