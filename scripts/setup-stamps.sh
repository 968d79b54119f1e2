# Source me with $root set to the checkout:  root=/path/to/lathe; . "$root/scripts/setup-stamps.sh"
#
# The two stamps that tell ./lathe whether its setup is done; ./lathe and scripts/test both read and write them
# through these functions, so what one does the other never redoes.
#   node_modules/.lathe-install-stamp    line 1: the folder of the Node that installed; line 2: "manifests <sha256>"
#   packages/cli/dist/.lathe-build-stamp  line 1: "inputs <sha256>" (the build's inputs when the build started)
# A stamp's mtime is when its step started (install: when it finished), so the hot path needs one `find -newer`.
# When a file looks newer, its content decides: a file rewritten with the same bytes (npm install rewriting
# package-lock.json, a checkout of the same commit) costs one hash (~60 ms), then the stamp's time is moved on.
# Bash only (arrays); no fork until a check needs one; safe under `set -euo pipefail`.

install_stamp="$root/node_modules/.lathe-install-stamp"
build_stamp="$root/packages/cli/dist/.lathe-build-stamp"
bin="$root/packages/cli/dist/bundle/lathe.js"

# The files each step depends on, relative to $root (globs expand there; missing ones drop out).
_lathe_old_pwd="$PWD"
_lathe_nullglob=off
shopt -q nullglob && _lathe_nullglob=on
shopt -s nullglob
cd "$root" || return 1
manifests=(package.json package-lock.json packages/*/package.json plugins/*/package.json)
build_inputs=("${manifests[@]}" nx.json tsconfig*.json packages/*/tsconfig*.json plugins/*/tsconfig*.json
  packages/*/src plugins/*/src packages/cli/scripts)
cd "$_lathe_old_pwd" || return 1
[ "$_lathe_nullglob" = on ] || shopt -u nullglob
unset _lathe_old_pwd _lathe_nullglob

# stamp_hash FILE_OR_DIR...: one sha256 of the contents and relative paths of every file under them.
stamp_hash() {
  local sum=""
  sum="$( (cd "$root" && find "$@" -type f -print0 2>/dev/null | LC_ALL=C sort -z | xargs -0 -r sha256sum) |
    sha256sum)" || true
  echo "${sum%% *}"
}

# stamp_now: a fresh reference file whose mtime is now (for `touch -r`); the caller removes it.
stamp_now() { mktemp "${TMPDIR:-/tmp}/lathe-stamp.XXXXXX"; }

# stamp_field STAMP LINE_NO: the value of that line ("manifests <hash>" → "<hash>"), empty when absent.
stamp_field() {
  local line="" n=0
  [ -f "$1" ] || return 0
  while IFS= read -r line; do
    n=$((n + 1))
    [ "$n" -eq "$2" ] && { echo "${line##* }"; return 0; }
  done <"$1"
}

# stamp_stale STAMP LINE_NO FILES...: prints why the step is needed (nothing when it is not). A file newer than the
# stamp with the same content as recorded moves the stamp's time to when the hash started and counts as fresh.
stamp_stale() {
  local stamp="$1" line="$2" newer recorded ref now
  shift 2
  [ -f "$stamp" ] || { echo "no stamp"; return 0; }
  newer="$(cd "$root" && find "$@" -newer "$stamp" -print -quit 2>/dev/null)" || true
  [ -n "$newer" ] || return 0
  recorded="$(stamp_field "$stamp" "$line")"
  ref="$(stamp_now)"
  now="$(stamp_hash "$@")"
  if [ -n "$recorded" ] && [ "$recorded" = "$now" ]; then
    touch -r "$ref" "$stamp"
  else
    echo "content changed since the stamp"
  fi
  rm -f "$ref"
}

# install_needed / build_needed: print why the step is needed; nothing when it is not.
install_needed() { stamp_stale "$install_stamp" 2 "${manifests[@]}"; }
build_needed() {
  [ -f "$bin" ] || { echo "no packages/cli/dist/bundle/lathe.js"; return 0; }
  stamp_stale "$build_stamp" 1 "${build_inputs[@]}"
}

# write_install_stamp NODE_DIR: after a successful npm install with that Node.
write_install_stamp() {
  printf '%s\nmanifests %s\n' "$1" "$(stamp_hash "${manifests[@]}")" >"$install_stamp"
}

# write_build_stamp HASH REF: after a build that started at REF's mtime with inputs of that HASH.
write_build_stamp() {
  mkdir -p "${build_stamp%/*}" && printf 'inputs %s\n' "$1" >"$build_stamp" && touch -r "$2" "$build_stamp"
}
