#!/usr/bin/env bash
# Install ccbridge: check prerequisites, install the three binaries to ${PREFIX:-$HOME/.local}/bin
# (built from source with Go, or, in an unpacked release archive, the prebuilt ones: no Go needed),
# and leave a starter config for `ccbridge setup` to fill in. Safe to run again: it changes only
# what differs and says so.
set -euo pipefail
cd "$(dirname "$0")"

PREFIX="${PREFIX:-$HOME/.local}"
BIN_DIR="$PREFIX/bin"
CONFIG_DIR="${XDG_CONFIG_HOME:-$HOME/.config}/ccbridge"
CONFIG="$CONFIG_DIR/config.toml"
BINARIES="ccbridge ccbridge-hook-stop ccbridge-hook-pretool"

# A release archive holds bin/ and no sources; a checkout holds go.mod.
if [ -f go.mod ]; then from_source=1; else from_source=0; fi

missing=0
need() { # need CMD WHY
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "missing: $1 — $2" >&2
    missing=1
  fi
}
if [ "$from_source" = 1 ]; then
  need go "Go 1.25 or newer builds ccbridge (https://go.dev/dl/, or your package manager; or use a release archive, which needs no Go)"
fi
need tmux "tmux 3.2 or newer runs the Claude Code sessions (e.g. apt-get install tmux)"
need git  "git is needed for worktree isolation (e.g. apt-get install git)"
[ "$missing" = 0 ] || exit 1

tmux_version=$(tmux -V | sed -E 's/^tmux (next-)?([0-9]+)\.([0-9]+).*/\2 \3/')
read -r tmux_major tmux_minor <<<"$tmux_version"
if [ "${tmux_major:-0}" -lt 3 ] || { [ "$tmux_major" -eq 3 ] && [ "${tmux_minor:-0}" -lt 2 ]; }; then
  echo "tmux $(tmux -V) is too old: ccbridge needs 3.2 or newer (per-pane environment, bracketed paste)" >&2
  exit 1
fi
if ! command -v claude >/dev/null 2>&1; then
  echo "note: 'claude' is not on PATH; install Claude Code or set [claude].command in the config"
fi

if [ "$from_source" = 1 ]; then
  build=$(mktemp -d)
  trap 'rm -rf "$build"' EXIT
  # The version as `make dist` stamps it; static (no cgo) and stripped (-s -w) as the release archives are.
  version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
  # With every module already in Go's cache (a second run), there is nothing to download.
  if GOPROXY=off go list -deps ./cmd/bridge >/dev/null 2>&1; then
    echo "building ccbridge $version…"
  else
    echo "building ccbridge $version (the first build downloads and compiles its modules: about a minute)…"
  fi
  for pkg in bridge:ccbridge hook-stop:ccbridge-hook-stop hook-pretool:ccbridge-hook-pretool; do
    echo "  compiling ${pkg#*:}…"
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/ccbridge/ccbridge/internal/daemon.version=$version" \
      -o "$build/${pkg#*:}" "./cmd/${pkg%%:*}"
  done
  src="$build"
else
  src=bin
  for b in $BINARIES; do
    [ -x "$src/$b" ] || { echo "this is neither a source checkout nor a release archive: $src/$b is missing" >&2; exit 1; }
  done
  # The archive lists its files' checksums: a damaged download stops here.
  if [ -f SHA256SUMS ]; then
    if command -v sha256sum >/dev/null 2>&1; then check=(sha256sum -c --quiet SHA256SUMS)
    else check=(shasum -a 256 -c --quiet SHA256SUMS); fi
    "${check[@]}" || { echo "the archive's files do not match SHA256SUMS: download it again" >&2; exit 1; }
  fi
  echo "installing the prebuilt ccbridge $("$src/ccbridge" --version | cut -d' ' -f2-)…"
fi

mkdir -p "$BIN_DIR"
changed=0
for b in $BINARIES; do
  if [ -f "$BIN_DIR/$b" ] && cmp -s "$src/$b" "$BIN_DIR/$b"; then
    echo "unchanged: $BIN_DIR/$b"
  else
    install -m 0755 "$src/$b" "$BIN_DIR/$b.new" && mv -f "$BIN_DIR/$b.new" "$BIN_DIR/$b"
    echo "installed: $BIN_DIR/$b"
    changed=1
  fi
done

mkdir -p "$CONFIG_DIR"
chmod 700 "$CONFIG_DIR"
# Every key with its default, for reference next to the config (setup's header points here).
if [ -f "$CONFIG_DIR/config.example.toml" ] && cmp -s config.example.toml "$CONFIG_DIR/config.example.toml"; then
  echo "unchanged: $CONFIG_DIR/config.example.toml"
else
  install -m 0600 config.example.toml "$CONFIG_DIR/config.example.toml"
  echo "installed: $CONFIG_DIR/config.example.toml (every key, for reference)"
  changed=1
fi
# No bot, server or channel yet: `ccbridge setup` asks for them, and `config check` says what is
# missing until then (the example's placeholder ids would pass for real ones).
if [ -f "$CONFIG" ]; then
  echo "unchanged: $CONFIG (kept as it is)"
else
  (umask 077 && cat >"$CONFIG" <<'CONFIG'
# ccbridge configuration. `ccbridge setup` adds your bot, its server, the owners and the
# channels → project directories here; `ccbridge config check` says what is still missing.
# Every key, with its default: config.example.toml, next to this file.
CONFIG
  )
  chmod 600 "$CONFIG"
  echo "created:   $CONFIG (empty until \`ccbridge setup\` fills it in)"
  changed=1
fi

if [ "$changed" = 0 ]; then
  echo "ccbridge is already installed and up to date; nothing changed."
fi
ccbridge=ccbridge
case ":$PATH:" in
  *":$BIN_DIR:"*) ;;
  *)
    ccbridge="$BIN_DIR/ccbridge"
    echo
    echo "note: $BIN_DIR is not on your PATH. Add it (and to ~/.bashrc or ~/.profile to keep it):"
    echo "  export PATH=\"$BIN_DIR:\$PATH\""
    ;;
esac

cat <<NEXT

Next steps:
  1. Create a Discord bot (see README.md, "Create the Discord bot").
  2. $ccbridge setup      (token, invite, server, owners, channels → directories; writes $CONFIG)
  3. $ccbridge doctor     (checks everything and says how to fix what is not right)
  4. $ccbridge run        (or: $ccbridge service install; watch the sessions with: tmux -L ccbridge attach)
NEXT
