/**
 * "A sandbox that says why, and a network you can open narrowly": inside the real bubblewrap sandbox, npm, pip, git,
 * curl (and cargo where installed) fail at once against an unreachable registry and the result says the network is
 * closed and how to open it; with `sandbox.network` as a list of hosts, a command reaches an allowed local server
 * through Lathe's proxy and gets 403 from another local port.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createBashTool } from "../src/bash.js"
import { detectSandbox, findOnPath, sandboxBlock } from "../src/sandbox.js"
import { checkProxyDestination, matchAllowList, parseAllowEntry, parseAllowList } from "../src/sandbox-proxy.js"
import { harness, run, runError, tempDir } from "./helpers.js"

const failed = (output: string) => ({ output, exitCode: 1, timedOut: false })

describe("sandboxBlock: a network failure, whatever the program", () => {
  // Lines real clients print when DNS or the connection fails (npm, pip, cargo, go, git, curl, wget, Python, Rust).
  it.each([
    "npm error code EAI_AGAIN\nnpm error request to https://registry.npmjs.org/uvu failed, reason: getaddrinfo EAI_AGAIN",
    "npm error code ENOTFOUND\nnpm error request to https://registry.npmjs.org/x failed",
    "WARNING: Retrying (Retry(total=0)) after connection broken by 'NewConnectionError(...: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')'",
    "error: download of config.json failed\n  [6] Could not resolve hostname (Could not resolve host: index.crates.io)",
    'go: github.com/x/y@v1: Get "https://proxy.golang.org/...": dial tcp: lookup proxy.golang.org on 10.0.0.53:53: dial udp 10.0.0.53:53: connect: network is unreachable',
    "fatal: unable to access 'https://github.com/lukeed/kleur/': Could not resolve host: github.com",
    "curl: (6) Could not resolve host: registry.npmjs.org",
    "curl: (5) Could not resolve proxy: proxy.corp",
    "curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
    "Resolving example.com (example.com)... failed: Temporary failure in name resolution.\nwget: unable to resolve host address 'example.com'",
    "Error: connect ECONNREFUSED 127.0.0.1:5432",
    "error sending request: failed to lookup address information: Temporary failure in name resolution"
  ])("%s → network", (output) => {
    expect(sandboxBlock(failed(output), { network: false })).toBe("network")
  })

  it("a client still retrying when the time limit killed it counts; success and an open network do not", () => {
    const retrying = {
      output: "WARNING: Retrying ... Temporary failure in name resolution",
      exitCode: null,
      timedOut: true
    }
    expect(sandboxBlock(retrying, { network: false })).toBe("network")
    expect(sandboxBlock({ ...retrying, output: "still compiling" }, { network: false })).toBeUndefined()
    expect(sandboxBlock(failed("curl: (6) Could not resolve host: x"), { network: true })).toBeUndefined()
    expect(sandboxBlock({ ...failed("ECONNREFUSED"), exitCode: 0 }, { network: false })).toBeUndefined()
  })

  it("with an allow-list, the proxy's 403 is its own verdict", () => {
    const plan = { network: false, allowHosts: ["registry.npmjs.org"] }
    expect(sandboxBlock(failed("curl: (56) CONNECT tunnel failed, response 403"), plan)).toBe("proxy")
    expect(sandboxBlock(failed("Lathe's sandbox proxy refused example.com:443: it is not on"), plan)).toBe("proxy")
    expect(sandboxBlock(failed("curl: (56) CONNECT tunnel failed, response 403"), { network: false })).toBeUndefined()
    // npm reports the proxy's refusal as the URL's 403; a listed host's own 403 is not the sandbox's doing.
    expect(sandboxBlock(failed("npm error 403 403 Forbidden - GET https://registry.yarnpkg.com/left-pad"), plan)).toBe(
      "proxy"
    )
    expect(
      sandboxBlock(failed("npm error 403 403 Forbidden - GET https://registry.npmjs.org/@private%2fx"), plan)
    ).toBeUndefined()
    // A listed name the proxy could not resolve is a network failure, not a refusal.
    expect(sandboxBlock(failed("curl: (56) CONNECT tunnel failed, response 502"), plan)).toBe("network")
  })
})

describe("the allow-list", () => {
  it("parses hosts, wildcards, addresses and ports, and refuses the rest with an example", () => {
    expect(parseAllowEntry("Registry.npmjs.org.")).toEqual({ host: "registry.npmjs.org", wildcard: false })
    expect(parseAllowEntry("*.github.com")).toEqual({ host: "github.com", wildcard: true })
    expect(parseAllowEntry("127.0.0.1:8080")).toEqual({ host: "127.0.0.1", wildcard: false, port: 8080 })
    expect(parseAllowEntry("[::1]:8080")).toEqual({ host: "::1", wildcard: false, port: 8080 })
    expect(parseAllowEntry("http://x.org")).toMatch(/is not a host: write "registry.npmjs.org"/)
    expect(parseAllowEntry("*.10.0.0.1")).toMatch(/a wildcard takes a domain name/)
    expect(parseAllowEntry("x.org:70000")).toMatch(/is not a host/)
  })

  it("matches exact names, names below a wildcard (not the domain itself), and ports 80/443 when none is given", () => {
    const list = parseAllowList(["registry.npmjs.org", "*.github.com", "127.0.0.1:8080"])
    expect(matchAllowList(list, "registry.npmjs.org", 443)).toBeDefined()
    expect(matchAllowList(list, "registry.npmjs.org", 22)).toBeUndefined()
    expect(matchAllowList(list, "api.github.com", 443)).toBeDefined()
    expect(matchAllowList(list, "github.com", 443)).toBeUndefined()
    expect(matchAllowList(list, "evilgithub.com", 443)).toBeUndefined()
    expect(matchAllowList(list, "127.0.0.1", 8080)).toBeDefined()
    expect(matchAllowList(list, "127.0.0.1", 8081)).toBeUndefined()
    expect(matchAllowList(list, "2130706433", 8080)).toBeUndefined()
  })

  it("a wildcard never opens a private address; an exact name may; an unlisted host is refused with the fix", async () => {
    const list = parseAllowList(["*.corp.example", "git.corp.example"])
    const lookup = async () => [{ address: "10.1.2.3", family: 4 as const }]
    await expect(checkProxyDestination(list, "api.corp.example", 443, lookup)).rejects.toThrow(
      /resolves to 10\.1\.2\.3, .*which a wildcard entry does not open/
    )
    await expect(checkProxyDestination(list, "git.corp.example", 443, lookup)).resolves.toEqual([
      { address: "10.1.2.3", family: 4 }
    ])
    await expect(checkProxyDestination(list, "169.254.169.254", 80, lookup)).rejects.toThrow(
      /not on the sandbox.network allow-list\. To allow it, add "169\.254\.169\.254" to the sandbox\.network list .*: \{ "sandbox": \{ "network": \["169\.254\.169\.254"\] \} \}\./
    )
  })
})

const linuxWithFilter = process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64")
const has = (program: string) => findOnPath(program, process.env.PATH) !== undefined

describe.runIf(linuxWithFilter)("real clients in the real sandbox with the network closed", () => {
  beforeAll(async () => {
    const found = await detectSandbox()
    if (found.kind !== "bubblewrap") throw new Error(`bubblewrap is needed for these tests: ${found.reason}`)
  })

  const closedTool = () =>
    createBashTool({
      sandbox: { mode: "workspace-write", network: false },
      tempDir: tempDir("lathe-net-tmp-"),
      truncationDir: tempDir("lathe-net-trunc-")
    })

  // Each fails at once (the time limit is generous and not asserted); the escape ask and the error say why and how.
  const commands: ReadonlyArray<readonly [string, string]> = [
    ["npm", "npm view left-pad version --registry https://registry.npmjs.org/"],
    ["pip3", "PIP_CONFIG_FILE=/dev/null pip3 download --no-deps --no-cache-dir -d dl left-pad-lathe-test"],
    ["git", "git ls-remote https://github.com/lukeed/kleur"],
    ["curl", "curl -sS https://registry.npmjs.org/left-pad"],
    ["cargo", "cargo search serde --limit 1"]
  ]
  for (const [program, command] of commands)
    it.runIf(has(program))(
      `${program}: fails with the network explanation`,
      async () => {
        const h = harness()
        h.mode = (request) => (request.permission === "sandbox_escape" ? "reject" : "allow")
        const error = await runError(
          closedTool(),
          { command, description: `Reach the registry with ${program}` },
          h.ctx()
        )
        const ask = h.asks.find((request) => request.permission === "sandbox_escape")
        expect(String(ask?.metadata?.reason)).toContain("it needs the network, which the sandbox keeps closed")
        expect(error.message).toContain('"sandbox": { "network": ["registry.npmjs.org"] }')
        expect(error.message).toContain("sandbox_escape")
      },
      20_000
    )
})

const listen = (body: string, seen: Array<string>): Promise<Server> =>
  new Promise((resolve) => {
    const server = createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`)
      response.end(body)
    })
    server.listen(0, "127.0.0.1", () => resolve(server))
  })

describe.runIf(linuxWithFilter)("sandbox.network as an allow-list (real bubblewrap, real curl)", () => {
  const seen1: Array<string> = []
  const seen2: Array<string> = []
  let one: Server
  let two: Server
  let port1 = 0
  let port2 = 0
  beforeAll(async () => {
    one = await listen("hello from the allowed server", seen1)
    two = await listen("the other server", seen2)
    port1 = (one.address() as AddressInfo).port
    port2 = (two.address() as AddressInfo).port
  })
  afterAll(() => {
    one.close()
    two.close()
  })

  const allowTool = (list: ReadonlyArray<string>) =>
    createBashTool({
      sandbox: { mode: "workspace-write", network: list },
      tempDir: tempDir("lathe-net-tmp-"),
      truncationDir: tempDir("lathe-net-trunc-")
    })

  it.runIf(has("curl"))(
    "reaches the allowed port through the proxy (plain and CONNECT), not the other one",
    async () => {
      const h = harness()
      h.mode = (request) => (request.permission === "sandbox_escape" ? "reject" : "allow")
      const tool = allowTool([`127.0.0.1:${port1}`])
      const plain = await run(
        tool,
        { command: `curl -sS http://127.0.0.1:${port1}/plain`, description: "Get" },
        h.ctx()
      )
      expect(plain.output).toContain("hello from the allowed server")
      const tunnel = await run(
        tool,
        { command: `curl -sS --proxytunnel http://127.0.0.1:${port1}/tunnel`, description: "Get through CONNECT" },
        h.ctx()
      )
      expect(tunnel.output).toContain("hello from the allowed server")
      expect(seen1).toEqual(["GET /plain", "GET /tunnel"])

      const code = await run(
        tool,
        { command: `curl -sS -o /dev/null -w '%{http_code}' http://127.0.0.1:${port2}/`, description: "Other port" },
        h.ctx()
      )
      expect(code.output).toMatch(/^403/)
      const refused = await runError(
        tool,
        { command: `curl -sS --proxytunnel http://127.0.0.1:${port2}/`, description: "Other port, CONNECT" },
        h.ctx()
      )
      expect(refused.message).toContain("CONNECT tunnel failed, response 403")
      expect(refused.message).toContain("sandbox.network does not list")
      expect(seen2).toEqual([])
      // Without the sandbox the other server answers: the 403 was the proxy's.
      expect(await (await fetch(`http://127.0.0.1:${port2}/`)).text()).toBe("the other server")
    },
    20_000
  )

  it.runIf(has("curl"))(
    "an allowed host name goes through CONNECT; the command sees the proxy variables, not Lathe's channel",
    async () => {
      const h = harness()
      const tool = allowTool([`localhost:${port1}`])
      const out = await run(
        tool,
        {
          command: `curl -sS --proxytunnel http://localhost:${port1}/named; echo; env | grep -c '^NODE_CHANNEL' ; echo "proxy=$HTTPS_PROXY"`,
          description: "Get by name"
        },
        h.ctx()
      )
      expect(out.output).toContain("hello from the allowed server")
      expect(out.output).toMatch(/^0$/m)
      expect(out.output).toMatch(/proxy=http:\/\/127\.0\.0\.1:\d+/)
      expect(seen1).toContain("GET /named")
    },
    20_000
  )

  it("a program that ignores the proxy variables still finds no network, and exit codes pass through", async () => {
    const h = harness()
    h.mode = (request) => (request.permission === "sandbox_escape" ? "reject" : "allow")
    const tool = allowTool([`127.0.0.1:${port1}`])
    const exit = await run(tool, { command: "exit 7", description: "Exit 7" }, h.ctx())
    expect(exit.metadata.exitCode).toBe(7)
    const error = await runError(
      tool,
      {
        command: `${process.execPath} -e "require('dns').lookup('example.com', (e) => { console.error(String(e)); process.exit(e ? 1 : 0) })"`,
        description: "Resolve a name"
      },
      h.ctx()
    )
    expect(error.message).toContain(`except for 127.0.0.1:${port1}, reached only through Lathe's proxy`)
  }, 20_000)
})
