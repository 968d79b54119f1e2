import { spawn } from "node:child_process"

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
 * The default {@link NotifySpawn}: `child_process.spawn` without a shell, output ignored, killed after
 * {@link COMMAND_TIMEOUT_MS}. Rejects with a message naming the program when it cannot start, exits non-zero or
 * times out.
 */
export const spawnCommand: NotifySpawn = (file, args, env) =>
  new Promise((resolve, reject) => {
    const child = spawn(file, [...args], {
      env: { ...env },
      stdio: "ignore",
      timeout: COMMAND_TIMEOUT_MS,
      killSignal: "SIGKILL"
    })
    child.on("error", (error) => reject(new Error(`could not run ${file}: ${error.message}`)))
    child.on("exit", (code, signal) => {
      if (code === 0) resolve()
      else reject(new Error(`${file} ${signal ? `was killed by ${signal}` : `exited with code ${code}`}`))
    })
  })
