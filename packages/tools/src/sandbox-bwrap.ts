import type { SandboxPlan } from "./sandbox.js"

/**
 * bubblewrap arguments that run `argv` under `plan`: the whole file system bound read-only, then each writable
 * folder bound read-write over it, then the read-only folders again (later binds win: a project inside the temp
 * dir stays writable in `workspace-write` and read-only in `read-only`), a fresh
 * `/dev` and `/proc`, a new PID namespace (the command cannot see or signal Lathe, nor read its environment in
 * `/proc`; when bwrap dies every process inside dies with it), no network unless allowed, a new session (no
 * terminal injection), and the command's working directory kept.
 */
export const bwrapArgs = (plan: SandboxPlan, argv: readonly [string, ReadonlyArray<string>]): Array<string> => [
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  ...plan.writable.flatMap((dir) => ["--bind", dir, dir]),
  ...plan.readOnly.flatMap((dir) => ["--ro-bind", dir, dir]),
  "--unshare-pid",
  ...(plan.network ? [] : ["--unshare-net"]),
  "--die-with-parent",
  "--new-session",
  "--chdir",
  plan.cwd,
  "--",
  argv[0],
  ...argv[1]
]
