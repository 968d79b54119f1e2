import type { HostFiles, HostTerminal } from "@lathe/plugin"
import { Context } from "effect"

/**
 * What the host does in the tools' place, handed to every plugin as `ctx.files` / `ctx.terminal`: an editor driving
 * Lathe (`lathe acp`) reads and writes the text of files through its buffers and runs commands in its terminal.
 * Without this service (every other front) the plugins' context has neither and the tools use the disk and their own
 * processes.
 */
export class HostSide extends Context.Service<
  HostSide,
  {
    readonly files?: HostFiles
    readonly terminal?: HostTerminal
  }
>()("@lathe/core/HostSide") {}
