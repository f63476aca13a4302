// Command ccbridge is the daemon that connects Discord channels to Claude Code
// sessions in tmux, and its command-line tools.
package main

import (
	"os"

	"github.com/ccbridge/ccbridge/internal/daemon"
)

func main() {
	os.Exit(daemon.Main(os.Args[1:], os.Stdout, os.Stderr))
}
