#!/bin/sh
# Installs the `loopx` CLI without VS Code and without the network:
#
#   scripts/install.sh [--prefix DIR] [path/to/loopx.vsix]
#
# From this checkout (after `npm run build`; it builds when node_modules/ is there), or from a
# LoopX .vsix. It finds the CLI and runs its `loopx install-command [--prefix DIR]`, which copies
# the CLI's files to DIR/share/loopx/<version>/ and writes the `loopx` shim DIR/bin/loopx (DIR:
# --prefix, else $LOOPX_PREFIX, else ~/.local). Needs node on PATH. Running it again is safe; a
# `loopx` in DIR/bin that LoopX did not write is left alone (exit 4).
set -eu

# The folders of the .vsix that hold what the CLI runs; which files it needs is install-command's
# to say (packaging/cli/files.json), and it names any that is missing.
CLI_DIRS='bin dist media'

say() { printf '%s\n' "$*"; }
die() {
  code=$1
  shift
  printf 'install.sh: %s\n' "$*" >&2
  exit "$code"
}
usage() { die 2 "$1 (usage: scripts/install.sh [--prefix DIR] [path/to/loopx.vsix])"; }

# LOOPX_PREFIX, the default folder, the refusal of a foreign loopx and what is said about PATH
# are install-command's (src/cli/commands/install-command.ts): only --prefix is passed on.
prefix=
vsix=
while [ $# -gt 0 ]; do
  case $1 in
    --prefix)
      [ $# -ge 2 ] && [ -n "$2" ] || usage '--prefix needs a folder'
      prefix=$2
      shift 2
      ;;
    --prefix=*)
      prefix=${1#--prefix=}
      [ -n "$prefix" ] || usage '--prefix needs a folder'
      shift
      ;;
    -h | --help)
      sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    -*) usage "unknown option $1" ;;
    *)
      [ -z "$vsix" ] || usage "one .vsix at most (got $vsix and $1)"
      vsix=$1
      shift
      ;;
  esac
done
command -v node >/dev/null 2>&1 ||
  die 3 "no node on PATH: the loopx CLI runs on Node.js 20 or later; install it (or put it on PATH), then run this again"

tmp=
cleanup() { [ -z "$tmp" ] || rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# Extracts the CLI's folders of the .vsix $1 into the folder $2 (as $2/extension/...), with
# unzip, else python3's zipfile, else node (zip entries are deflated or stored).
extract() {
  entries=
  for d in $CLI_DIRS; do entries="$entries extension/$d/"; done
  if command -v unzip >/dev/null 2>&1; then
    globs=
    for d in $CLI_DIRS; do globs="$globs extension/$d/*"; done
    # shellcheck disable=SC2086 # fixed names without spaces; unzip expands the globs itself
    set -f
    unzip -q -o "$1" $globs -d "$2" || die 6 "$1 is not a LoopX .vsix (unzip could not read it)"
    set +f
  elif command -v python3 >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for n in z.namelist():
    if any(n.startswith(d) for d in sys.argv[3:]) and not n.endswith("/"):
        z.extract(n, sys.argv[2])' "$1" "$2" $entries 2>/dev/null || die 6 "$1 is not a LoopX .vsix (python3 zipfile could not read it)"
  else
    # shellcheck disable=SC2086
    node -e '
const fs = require("fs"), path = require("path"), zlib = require("zlib");
const [zip, out, ...want] = process.argv.slice(1);
const b = fs.readFileSync(zip);
let e = b.length - 22;
while (e >= 0 && b.readUInt32LE(e) !== 0x06054b50) e--;
if (e < 0) throw new Error("not a zip file");
let p = b.readUInt32LE(e + 16);
for (let i = b.readUInt16LE(e + 10); i > 0; i--) {
  const method = b.readUInt16LE(p + 10), size = b.readUInt32LE(p + 20);
  const nl = b.readUInt16LE(p + 28), xl = b.readUInt16LE(p + 30), cl = b.readUInt16LE(p + 32);
  const name = b.toString("utf8", p + 46, p + 46 + nl), local = b.readUInt32LE(p + 42);
  p += 46 + nl + xl + cl;
  if (name.endsWith("/") || !want.some((d) => name.startsWith(d))) continue;
  const start = local + 30 + b.readUInt16LE(local + 26) + b.readUInt16LE(local + 28);
  const data = b.subarray(start, start + size);
  fs.mkdirSync(path.join(out, path.dirname(name)), { recursive: true });
  fs.writeFileSync(path.join(out, name), method === 8 ? zlib.inflateRawSync(data) : data);
}' "$1" "$2" $entries 2>/dev/null || die 6 "$1 is not a LoopX .vsix (node could not read it)"
  fi
  [ -f "$2/extension/bin/loopx.js" ] || die 6 "$1 holds no extension/bin/loopx.js: is it a LoopX .vsix?"
}

if [ -n "$vsix" ]; then
  [ -f "$vsix" ] || die 3 "$vsix: no such file"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/loopx-install.XXXXXX")
  say "unpacking the CLI from $vsix ..."
  extract "$vsix" "$tmp"
  src=$tmp/extension
else
  src=$(cd "$(dirname "$0")/.." && pwd)
  [ -f "$src/package.json" ] && [ -f "$src/bin/loopx.js" ] ||
    die 3 "$src is not a LoopX checkout: pass the .vsix to install from"
  if [ ! -s "$src/dist/cli.js" ] || [ ! -s "$src/dist/mcp.js" ] || [ ! -s "$src/dist/webview.js" ]; then
    [ -d "$src/node_modules" ] || die 3 "the CLI is not built in $src: run \`npm install\` and \`npm run build\` there first"
    say "building the CLI in $src ..."
    (cd "$src" && node scripts/build/build.mjs >/dev/null) || die 1 "the build failed: run \`npm run build\` in $src to see why"
  fi
fi
if [ -n "$prefix" ]; then set -- install-command --prefix "$prefix"; else set -- install-command; fi
if [ -z "$tmp" ]; then
  exec node "$src/bin/loopx.js" "$@"
fi
# Not exec: the unpacked .vsix is removed (the EXIT trap) once the CLI has copied its files.
status=0
node "$src/bin/loopx.js" "$@" || status=$?
exit "$status"
