/**
 * The one way Lathe starts a program and waits for it lives in the kit (`@lathe/plugin/process`: plain Node, no
 * effect, so this room stays loadable before anything else), where the built-in tools' bash reaches it too; core's
 * rooms and its public entry take it from here. See `childEnv` for a command's environment and `gitEnv` for git's.
 */
export {
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_RUN_TIMEOUT_MS,
  killProcessGroup,
  type ProcessResult,
  type RunProcessOptions,
  runProcess
} from "@lathe/plugin/process"
