#!/usr/bin/env bash
# Install ccbridge: check prerequisites, build the three binaries, install them to
# ${PREFIX:-$HOME/.local}/bin, and write ~/.config/ccbridge/config.toml from the example
# if there is none. Safe to run again: it changes only what differs and says so.
set -euo pipefail
cd "$(dirname "$0")"

PREFIX="${PREFIX:-$HOME/.local}"
BIN_DIR="$PREFIX/bin"
CONFIG_DIR="${XDG_CONFIG_HOME:-$HOME/.config}/ccbridge"
CONFIG="$CONFIG_DIR/config.toml"

missing=0
need() { # need CMD WHY
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "missing: $1 — $2" >&2
    missing=1
  fi
}
need go   "Go 1.25 or newer builds ccbridge (https://go.dev/dl/, or your package manager)"
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

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
echo "building ccbridge…"
go build -trimpath -o "$build/ccbridge" ./cmd/bridge
go build -trimpath -o "$build/ccbridge-hook-stop" ./cmd/hook-stop
go build -trimpath -o "$build/ccbridge-hook-pretool" ./cmd/hook-pretool

mkdir -p "$BIN_DIR"
changed=0
for b in ccbridge ccbridge-hook-stop ccbridge-hook-pretool; do
  if [ -f "$BIN_DIR/$b" ] && cmp -s "$build/$b" "$BIN_DIR/$b"; then
    echo "unchanged: $BIN_DIR/$b"
  else
    install -m 0755 "$build/$b" "$BIN_DIR/$b.new" && mv -f "$BIN_DIR/$b.new" "$BIN_DIR/$b"
    echo "installed: $BIN_DIR/$b"
    changed=1
  fi
done

if [ -f "$CONFIG" ]; then
  echo "unchanged: $CONFIG (kept as it is)"
else
  mkdir -p "$CONFIG_DIR"
  chmod 700 "$CONFIG_DIR"
  (umask 077 && cp config.example.toml "$CONFIG")
  chmod 600 "$CONFIG"
  echo "created:   $CONFIG (from config.example.toml)"
  changed=1
fi

if [ "$changed" = 0 ]; then
  echo "ccbridge is already installed and up to date; nothing changed."
fi
case ":$PATH:" in *":$BIN_DIR:"*) ;; *) echo "note: add $BIN_DIR to your PATH" ;; esac

cat <<NEXT

Next steps:
  1. Create a Discord bot (see README.md, "Create the Discord bot").
  2. ccbridge setup      (token, invite, server, channels → directories, owners; writes $CONFIG)
  3. ccbridge doctor     (checks everything and says how to fix what is not right)
  4. ccbridge run        (or: ccbridge service install; watch the sessions with: tmux -L ccbridge attach)
NEXT
