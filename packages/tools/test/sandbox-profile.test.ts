import { describe, expect, it } from "@effect/vitest"
import { sandboxBlock } from "../src/sandbox.js"
import { bwrapArgs } from "../src/sandbox-bwrap.js"
import { seatbeltArgs, seatbeltProfile } from "../src/sandbox-seatbelt.js"

const plan = {
  mode: "workspace-write" as const,
  network: false,
  writable: ["/work/my project", '/tmp/quo"te'],
  readOnly: ['/tmp/quo"te/ro'],
  cwd: "/work/my project/src"
}
const argv = ["/bin/bash", ["-c", "echo hi"]] as const

describe("sandbox programs' arguments", () => {
  it("the Seatbelt profile denies writes but the writable folders, and the network unless allowed", () => {
    expect(seatbeltProfile(plan)).toBe(
      [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        '(allow file-write* (subpath (param "WRITABLE_0")))',
        '(allow file-write* (subpath (param "WRITABLE_1")))',
        '(deny file-write* (subpath (param "READONLY_0")))',
        '(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (regex #"^/dev/fd/"))',
        "(deny network*)",
        "(allow network* (remote unix-socket) (local unix-socket))",
        ""
      ].join("\n")
    )
    expect(seatbeltProfile({ ...plan, network: true })).not.toContain("network")
  })

  it("paths reach sandbox-exec as -D parameters, never inside the profile text", () => {
    const args = seatbeltArgs(plan, argv)
    expect(args.slice(2)).toEqual([
      "-D",
      "WRITABLE_0=/work/my project",
      "-D",
      'WRITABLE_1=/tmp/quo"te',
      "-D",
      'READONLY_0=/tmp/quo"te/ro',
      "--",
      "/bin/bash",
      "-c",
      "echo hi"
    ])
    expect(args[1]).not.toContain("/work")
  })

  it("bwrap: read-only root, writable binds after it, read-only ones last, new PID namespace, no network, cwd kept", () => {
    expect(bwrapArgs(plan, argv)).toEqual([
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--bind",
      "/work/my project",
      "/work/my project",
      "--bind",
      '/tmp/quo"te',
      '/tmp/quo"te',
      "--ro-bind",
      '/tmp/quo"te/ro',
      '/tmp/quo"te/ro',
      "--unshare-user",
      "--disable-userns",
      "--cap-drop",
      "ALL",
      "--unshare-pid",
      "--unshare-net",
      "--die-with-parent",
      "--new-session",
      "--chdir",
      "/work/my project/src",
      "--",
      "/bin/bash",
      "-c",
      "echo hi"
    ])
    expect(bwrapArgs({ ...plan, network: true }, argv)).not.toContain("--unshare-net")
    expect(bwrapArgs({ ...plan, disableUserns: false }, argv)).not.toContain("--disable-userns")
  })

  it("bwrap: mounts go shallowest first, so a pinned .git, protected files and hidden sockets cover their folders", () => {
    const args = bwrapArgs(
      {
        ...plan,
        writable: ["/work/p", "/tmp"],
        readOnly: ["/work/p/.git/config"],
        pinned: ["/work/p/.git"],
        hiddenFolders: ["/run/user", "/tmp/tmux-0"],
        hiddenSockets: ["/tmp/agent.sock"]
      },
      argv
    )
    const mounts = args.slice(7, args.indexOf("--unshare-user"))
    expect(mounts).toEqual([
      ...["--bind", "/tmp", "/tmp"],
      ...["--bind", "/work/p", "/work/p"],
      ...["--tmpfs", "/run/user"],
      ...["--tmpfs", "/tmp/tmux-0"],
      ...["--ro-bind", "/dev/null", "/tmp/agent.sock"],
      ...["--bind", "/work/p/.git", "/work/p/.git"],
      ...["--ro-bind", "/work/p/.git/config", "/work/p/.git/config"]
    ])
  })

  it("the Seatbelt profile also denies protected paths that do not exist yet and moving pinned folders", () => {
    const profile = seatbeltProfile({ ...plan, absent: ["/work/p/lathe.jsonc"], pinned: ["/work/p/.git"] })
    expect(profile).toContain('(deny file-write* (subpath (param "ABSENT_0")))')
    expect(profile).toContain('(deny file-write* (literal (param "PINNED_0")))')
    const args = seatbeltArgs({ ...plan, absent: ["/work/p/lathe.jsonc"], pinned: ["/work/p/.git"] }, argv)
    expect(args).toContain("ABSENT_0=/work/p/lathe.jsonc")
    expect(args).toContain("PINNED_0=/work/p/.git")
  })
})

describe("sandboxBlock: did the sandbox make the command fail?", () => {
  const failed = (output: string, exitCode: number | null = 1) => ({ output, exitCode, timedOut: false })
  it.each([
    ["touch: cannot touch '/etc/x': Read-only file system", "write"],
    ["npm ERR! code EROFS", "write"],
    ["mv: cannot move '.git' to 'old': Device or resource busy", "write"],
    ["curl: (6) Could not resolve host: example.com", "network"],
    ["bash: connect: Connection refused", "network"],
    ["ping: connect: Network is unreachable", "network"],
    ["Error: getaddrinfo EAI_AGAIN registry.npmjs.org", "network"],
    ["error: some test failed", undefined]
  ])("%s → %s", (output, expected) => {
    expect(sandboxBlock(failed(output), { network: false })).toBe(expected)
  })

  it("success, a timeout, or network errors with the network allowed are not the sandbox's doing", () => {
    expect(sandboxBlock(failed("Read-only file system", 0), { network: false })).toBeUndefined()
    expect(
      sandboxBlock({ output: "Read-only file system", exitCode: null, timedOut: true }, { network: false })
    ).toBeUndefined()
    expect(sandboxBlock(failed("Connection refused"), { network: true })).toBeUndefined()
  })
})
