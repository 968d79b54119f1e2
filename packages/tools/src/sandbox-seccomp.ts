/**
 * The seccomp filter bubblewrap loads (`--seccomp <fd>`) when the network is closed: the kernel refuses `socket()` for
 * `AF_UNIX`, so a command cannot connect to a socket outside the sandbox wherever it lies (the socket scan of
 * `sandbox-sockets.ts` stays as a second layer). `socketpair()` is not touched: pipes between a command's own
 * processes keep working. Abstract sockets need `socket()` too, so they are refused as well (the closed network
 * namespace already keeps the ones outside out of reach).
 *
 * seccomp sees only the syscall's number and its arguments as integers (never the address `connect()` points to), so
 * the filter works on the family given to `socket()`. It is a classic-BPF program assembled here: no native addon, no
 * library. Every ABI a process on the host can use is covered: x86_64, x32 (all its calls refused) and i386 on an
 * x86_64 host (`socketcall`, which multiplexes `socket`, refused whole); aarch64 and 32-bit ARM on an aarch64 host.
 * `io_uring` is refused on every ABI: its `IORING_OP_SOCKET` creates sockets without the `socket()` syscall.
 */

/** One instruction: `struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; }`. */
interface Instruction {
  readonly code: number
  readonly k: number
  /** Labels jumped to when the test holds / fails (conditional jumps only). */
  readonly jt?: string
  readonly jf?: string
}

// Opcodes (linux/bpf_common.h).
const LD_W_ABS = 0x20
const JEQ_K = 0x15
const JSET_K = 0x45
const RET_K = 0x06

// linux/seccomp.h, linux/audit.h.
const RET_ALLOW = 0x7fff_0000
const RET_ERRNO = 0x0005_0000
const EACCES = 13
const ENOSYS = 38
const AUDIT_ARCH_X86_64 = 0xc000_003e
const AUDIT_ARCH_I386 = 0x4000_0003
const AUDIT_ARCH_AARCH64 = 0xc000_00b7
const AUDIT_ARCH_ARM = 0x4000_0028
const X32_SYSCALL_BIT = 0x4000_0000
const AF_UNIX = 1

// Offsets in `struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }`; every host
// covered is little-endian, so the low half of args[0] (socket's `int domain`) is at 16.
const NR = 0
const ARCH = 4
const ARG0_LOW = 16

/** io_uring_setup, io_uring_enter, io_uring_register: the same numbers on every ABI covered. */
const IO_URING = [425, 426, 427]

const ld = (offset: number): Instruction => ({ code: LD_W_ABS, k: offset })
const jeq = (k: number, jt: string, jf = "next"): Instruction => ({ code: JEQ_K, k, jt, jf })
const ret = (k: number): Instruction => ({ code: RET_K, k })

/** The program as labelled blocks; a jump names a block, or `next` (the following instruction). */
const PROGRAM: ReadonlyArray<readonly [string, ReadonlyArray<Instruction>]> = [
  [
    "start",
    [
      ld(ARCH),
      jeq(AUDIT_ARCH_X86_64, "x86_64"),
      jeq(AUDIT_ARCH_AARCH64, "aarch64"),
      jeq(AUDIT_ARCH_I386, "i386"),
      jeq(AUDIT_ARCH_ARM, "arm"),
      ret(RET_ALLOW)
    ]
  ],
  [
    "x86_64",
    [
      ld(NR),
      { code: JSET_K, k: X32_SYSCALL_BIT, jt: "nosys", jf: "next" },
      jeq(41, "family"),
      ...IO_URING.map((nr) => jeq(nr, "nosys")),
      ret(RET_ALLOW)
    ]
  ],
  ["aarch64", [ld(NR), jeq(198, "family"), ...IO_URING.map((nr) => jeq(nr, "nosys")), ret(RET_ALLOW)]],
  ["i386", [ld(NR), jeq(102, "nosys"), jeq(359, "family"), ...IO_URING.map((nr) => jeq(nr, "nosys")), ret(RET_ALLOW)]],
  ["arm", [ld(NR), jeq(281, "family"), ...IO_URING.map((nr) => jeq(nr, "nosys")), ret(RET_ALLOW)]],
  ["family", [ld(ARG0_LOW), jeq(AF_UNIX, "eacces"), ret(RET_ALLOW)]],
  ["eacces", [ret(RET_ERRNO | EACCES)]],
  ["nosys", [ret(RET_ERRNO | ENOSYS)]]
]

/**
 * Assembles labelled blocks into `struct sock_filter` bytes (8 per instruction, host order: little-endian). Jumps go
 * forward only, at most 255 instructions, as classic BPF requires.
 */
export const assemble = (blocks: ReadonlyArray<readonly [string, ReadonlyArray<Instruction>]>): Uint8Array => {
  const at = new Map<string, number>()
  let count = 0
  for (const [label, instructions] of blocks) {
    at.set(label, count)
    count += instructions.length
  }
  const bytes = new Uint8Array(count * 8)
  const view = new DataView(bytes.buffer)
  let pc = 0
  for (const [, instructions] of blocks)
    for (const instruction of instructions) {
      const offset = (label: string | undefined): number => {
        if (label === undefined || label === "next") return 0
        const target = at.get(label)
        const jump = target === undefined ? -1 : target - pc - 1
        if (jump < 0 || jump > 255) throw new Error(`seccomp: bad jump to ${label} at ${pc}`)
        return jump
      }
      view.setUint16(pc * 8, instruction.code, true)
      view.setUint8(pc * 8 + 2, offset(instruction.jt))
      view.setUint8(pc * 8 + 3, offset(instruction.jf))
      view.setUint32(pc * 8 + 4, instruction.k >>> 0, true)
      pc++
    }
  return bytes
}

let program: Uint8Array | undefined

/**
 * The filter's bytes for bubblewrap's `--seccomp`, or undefined on a host whose ABIs it does not know (anything but
 * x86_64 and arm64 Linux): there the closed network namespace and the socket scan are the only walls.
 */
export const unixSocketFilter = (arch: string = process.arch): Uint8Array | undefined => {
  if (arch !== "x64" && arch !== "arm64") return undefined
  program ??= assemble(PROGRAM)
  return program
}
