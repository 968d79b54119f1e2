import type { SandboxPlan } from "./sandbox-plan.js"

const depth = (path: string): number => path.split("/").filter(Boolean).length

/**
 * bubblewrap arguments that run `argv` under `plan`: the whole file system bound read-only, then the plan's mounts
 * from the shallowest path to the deepest (a later mount covers an earlier one, so a deeper rule wins whatever its
 * kind: a project inside the temp dir stays writable in `workspace-write` and read-only in `read-only`; a socket in
 * the temp dir stays hidden): writable folders and pinned ones (bound onto themselves, so they cannot be moved or
 * replaced), read-only ones, hidden socket folders (an empty tmpfs) and hidden sockets (`/dev/null` over each).
 * Then a fresh `/dev` and `/proc`, a new user namespace with every capability dropped (even when Lathe runs as root,
 * nothing inside may remount, mount or bypass file permissions), no nested user namespaces, a new PID namespace (the
 * command cannot see or signal Lathe, nor read its environment in `/proc`; when bwrap dies every process inside dies
 * with it), no network unless allowed, the seccomp filter read from `plan.seccompFd` when given, a new session (no terminal injection), and the working directory kept.
 */
export const bwrapArgs = (plan: SandboxPlan, argv: readonly [string, ReadonlyArray<string>]): Array<string> => {
  const mounts = [
    ...plan.writable.map((dir) => ({ path: dir, args: ["--bind", dir, dir] })),
    ...(plan.pinned ?? []).map((dir) => ({ path: dir, args: ["--bind", dir, dir] })),
    ...plan.readOnly.map((dir) => ({ path: dir, args: ["--ro-bind", dir, dir] })),
    ...(plan.hiddenFolders ?? []).map((dir) => ({ path: dir, args: ["--tmpfs", dir] })),
    ...(plan.hiddenSockets ?? []).map((file) => ({ path: file, args: ["--ro-bind", "/dev/null", file] }))
  ]
  // Array.prototype.sort is stable: at equal depth the order above holds.
  mounts.sort((a, b) => depth(a.path) - depth(b.path))
  return [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    ...mounts.flatMap((mount) => mount.args),
    "--unshare-user",
    ...(plan.disableUserns === false ? [] : ["--disable-userns"]),
    "--cap-drop",
    "ALL",
    "--unshare-pid",
    ...(plan.network ? [] : ["--unshare-net"]),
    ...(plan.seccompFd === undefined ? [] : ["--seccomp", String(plan.seccompFd)]),
    "--die-with-parent",
    "--new-session",
    "--chdir",
    plan.cwd,
    "--",
    argv[0],
    ...argv[1]
  ]
}
