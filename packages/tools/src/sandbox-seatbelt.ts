import type { SandboxPlan } from "./sandbox-plan.js"

/**
 * The Seatbelt (macOS `sandbox-exec`) profile for `plan`. Everything is allowed except what the sandbox exists to
 * stop: writes anywhere but the writable folders (minus the read-only ones inside them; the last matching rule
 * wins; protected paths that do not exist yet are denied too, and pinned folders cannot be moved or removed) and the
 * terminal devices, and, unless allowed, network access other than local Unix sockets. A pinned folder inside a
 * read-only one (`.lathe/plans` in `.lathe`) is writable again, as bubblewrap's deeper mount makes it. Paths are
 * passed as `-D WRITABLE_<n>=<path>` / `READONLY_<n>` parameters, never spliced into the profile text. Reads stay
 * open, as on Linux.
 */
export const seatbeltProfile = (
  plan: Pick<SandboxPlan, "writable" | "readOnly" | "network" | "absent" | "pinned">
): string =>
  [
    "(version 1)",
    "(allow default)",
    "(deny file-write*)",
    ...plan.writable.map((_, index) => `(allow file-write* (subpath (param "WRITABLE_${index}")))`),
    ...plan.readOnly.map((_, index) => `(deny file-write* (subpath (param "READONLY_${index}")))`),
    ...(plan.absent ?? []).map((_, index) => `(deny file-write* (subpath (param "ABSENT_${index}")))`),
    ...(plan.pinned ?? []).flatMap((dir, index) =>
      plan.readOnly.some((readOnly) => dir.startsWith(`${readOnly}/`))
        ? [`(allow file-write* (subpath (param "PINNED_${index}")))`]
        : []
    ),
    ...(plan.pinned ?? []).map((_, index) => `(deny file-write* (literal (param "PINNED_${index}")))`),
    '(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (regex #"^/dev/fd/"))',
    ...(plan.network ? [] : ["(deny network*)", "(allow network* (remote unix-socket) (local unix-socket))"]),
    ""
  ].join("\n")

/** `sandbox-exec` arguments that run `argv` under `plan`, from the plan's working directory. */
export const seatbeltArgs = (plan: SandboxPlan, argv: readonly [string, ReadonlyArray<string>]): Array<string> => [
  "-p",
  seatbeltProfile(plan),
  ...plan.writable.flatMap((dir, index) => ["-D", `WRITABLE_${index}=${dir}`]),
  ...plan.readOnly.flatMap((dir, index) => ["-D", `READONLY_${index}=${dir}`]),
  ...(plan.absent ?? []).flatMap((path, index) => ["-D", `ABSENT_${index}=${path}`]),
  ...(plan.pinned ?? []).flatMap((dir, index) => ["-D", `PINNED_${index}=${dir}`]),
  "--",
  argv[0],
  ...argv[1]
]
