#!/usr/bin/env bash
# Puts `helix` on your PATH by linking this checkout's bin/run.js into a bin
# directory: $PREFIX/bin when PREFIX is set (or --prefix DIR is given), else
# ~/.local/bin. Safe to run again: an existing link to this checkout is left as is.
#
#   scripts/install.sh                 # link ~/.local/bin/helix
#   scripts/install.sh --prefix /opt   # link /opt/bin/helix
#   scripts/install.sh --uninstall     # remove the link (only if it is ours)
#
# It never overwrites a `helix` it did not create: a different file or link at the
# target is an error (remove it yourself, or pick another --prefix).
set -euo pipefail

usage() {
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
}

die() {
  printf 'install.sh: %s\n' "$1" >&2
  exit 1
}

uninstall=0
prefix="${PREFIX:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --uninstall) uninstall=1 ;;
    --prefix)
      [ $# -ge 2 ] || die "--prefix needs a directory"
      prefix="$2"
      shift
      ;;
    --prefix=*) prefix="${1#--prefix=}" ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) die "unknown option '$1' (try --help)" ;;
  esac
  shift
done

# The checkout (or unpacked package) this script belongs to, with symlinks resolved.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
home="$(cd "$here/.." && pwd -P)"
entry="$home/bin/run.js"

if [ -n "$prefix" ]; then
  bindir="$prefix/bin"
else
  [ -n "${HOME:-}" ] || die "HOME is not set; pass --prefix DIR"
  bindir="$HOME/.local/bin"
fi
target="$bindir/helix"

# Is $target a symlink that points at our entry point?
is_ours() {
  [ -L "$target" ] || return 1
  local dest
  dest="$(readlink "$target")"
  [ "$dest" = "$entry" ]
}

if [ "$uninstall" -eq 1 ]; then
  if [ ! -e "$target" ] && [ ! -L "$target" ]; then
    printf 'helix is not installed in %s (nothing to remove)\n' "$bindir"
    exit 0
  fi
  is_ours || die "$target is not a link to $entry; leaving it alone"
  rm -f "$target"
  printf 'removed %s\n' "$target"
  exit 0
fi

[ -f "$entry" ] || die "$entry not found (run this script from a helix checkout or package)"

# Node 20.19 or newer (package.json engines).
command -v node >/dev/null 2>&1 || die "node is not on PATH; helix needs Node.js 20.19 or newer"
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)'; then
  die "helix needs Node.js 20.19 or newer (found $(node --version))"
fi

# A checkout needs its dependencies and a build before the link is useful.
if [ ! -d "$home/node_modules/@oclif/core" ] && [ ! -d "$home/../@oclif/core" ]; then
  printf 'note: %s has no node_modules yet; run: (cd %s && npm ci && npm run build)\n' "$home" "$home" >&2
elif [ ! -f "$home/oclif.manifest.json" ] || [ ! -d "$home/dist" ]; then
  printf 'note: helix is not built yet; run: (cd %s && npm run build)\n' "$home" >&2
fi

chmod +x "$entry" 2>/dev/null || true
mkdir -p "$bindir"
if [ -e "$target" ] || [ -L "$target" ]; then
  if is_ours; then
    printf 'helix already installed: %s -> %s\n' "$target" "$entry"
    exit 0
  fi
  die "$target already exists and is not a link to $entry; remove it or use --prefix"
fi
ln -s "$entry" "$target"
printf 'installed %s -> %s\n' "$target" "$entry"

case ":${PATH:-}:" in
  *":$bindir:"*) ;;
  *) printf 'note: %s is not on your PATH; add it, e.g.: export PATH="%s:$PATH"\n' "$bindir" "$bindir" >&2 ;;
esac
