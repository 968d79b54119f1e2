import { runProgram } from "@lathe/plugin"

/**
 * Runs a program with arguments (no shell) and the given environment (Lathe's, without its secrets) and resolves
 * when it exits successfully; rejects with the reason otherwise.
 */
export type NotifySpawn = (
  file: string,
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string>>
) => Promise<void>

/** How long a notification command may run before it is killed. */
export const COMMAND_TIMEOUT_MS = 10_000

/**
 * The default {@link NotifySpawn}: the kit's `runProgram` (no shell, its own process group), output ignored, the
 * whole group killed after {@link COMMAND_TIMEOUT_MS}. Rejects with a message naming the program when it cannot start,
 * exits non-zero or times out.
 */
export const spawnCommand: NotifySpawn = async (file, args, env) => {
  // No output kept: done when it exits, even if something it started holds its output open.
  const result = await runProgram(file, args, {
    cwd: process.cwd(),
    env,
    timeoutMs: COMMAND_TIMEOUT_MS,
    output: false
  }).catch((error: unknown) => {
    throw new Error(`could not run ${file}: ${error instanceof Error ? error.message : String(error)}`)
  })
  if (result.exitCode === 0) return
  throw new Error(
    `${file} ${result.signal ? `was killed by ${result.signal}` : `exited with code ${String(result.exitCode)}`}`
  )
}
