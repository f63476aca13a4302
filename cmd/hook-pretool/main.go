// Command ccbridge-hook-pretool is the hook Claude Code runs on tool events
// (PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure).
package main

import (
	"context"
	"os"

	"github.com/ccbridge/ccbridge/internal/hook"
)

func main() {
	os.Exit(hook.Main(context.Background(), hook.PreTool, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
