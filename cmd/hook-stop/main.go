// Command ccbridge-hook-stop is the hook Claude Code runs on turn and session
// events (Stop, StopFailure, UserPromptSubmit, Notification, SessionStart,
// SessionEnd).
package main

import (
	"context"
	"os"

	"github.com/ccbridge/ccbridge/internal/hook"
)

func main() {
	os.Exit(hook.Main(context.Background(), hook.Stop, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
