/**
 * The forwarder that runs inside a bubblewrap sandbox whose network is open only to an allow-list of hosts. It is
 * plain CommonJS source for `node -e` (Lathe's own Node, `process.execPath`, is visible read-only inside), so nothing
 * is written to a disk and the CLI bundle carries it as a string.
 *
 * Contract: started by the sandbox with Node's IPC channel on an inherited descriptor (`NODE_CHANNEL_FD`, set by the
 * `onMessage` option of the process runner), and one argument, JSON `{ argv, noProxy }`. It listens on an ephemeral
 * port of the sandbox's own loopback (the only interface of its network namespace) and hands each accepted
 * connection, unread, to Lathe with `process.send` (the socket's descriptor travels over the existing channel with
 * SCM_RIGHTS: no Unix socket is created inside, which the seccomp filter would refuse). Then it runs `argv` with the
 * proxy variables pointing at that port, without the IPC channel (its variables are removed and its descriptor is
 * closed by a `sh` that `exec`s the command), and exits as the command exits: same code, or same signal.
 */
export const FORWARDER_SOURCE = String.raw`
"use strict"
const net = require("node:net")
const { spawn } = require("node:child_process")
const { argv, noProxy } = JSON.parse(process.argv[1])
const server = net.createServer({ pauseOnConnect: true }, (socket) => {
  if (!process.connected) return socket.destroy()
  process.send({ kind: "connection" }, socket, {}, (error) => { if (error) socket.destroy() })
})
server.on("error", (error) => {
  process.stderr.write("lathe sandbox proxy: " + error.message + "\n")
  process.exit(125)
})
server.listen(0, "127.0.0.1", () => {
  const url = "http://127.0.0.1:" + server.address().port
  const env = { ...process.env }
  delete env.NODE_CHANNEL_FD
  delete env.NODE_CHANNEL_SERIALIZATION_MODE
  for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
    "npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY"]) env[name] = url
  env.NO_PROXY = noProxy
  env.no_proxy = noProxy
  env.npm_config_noproxy = noProxy
  env.NODE_USE_ENV_PROXY = "1"
  const fd = process.channel && typeof process.channel.fd === "number" ? process.channel.fd : -1
  const [file, args] = argv
  const child = fd > 2
    ? spawn("/bin/sh", ["-c", "exec " + fd + ">&-; exec \"$@\"", "sh", file, ...args], { stdio: "inherit", env })
    : spawn(file, args, { stdio: "inherit", env })
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal))
  child.on("error", (error) => {
    process.stderr.write("lathe sandbox proxy: could not start the command: " + error.message + "\n")
    process.exit(127)
  })
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    }
    process.exit(code ?? 1)
  })
})
`
