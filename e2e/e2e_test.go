//go:build e2e

// Package e2e runs ccbridge's real binaries against the real Claude Code CLI
// in tmux, a scripted fake model and (from the relay on) a fake Discord.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// bins holds the project's binaries, built once for the whole run.
var bins struct {
	dir, bridge, hookStop, hookPretool string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ccbridge-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.dir = dir
	bins.bridge = filepath.Join(dir, "ccbridge")
	bins.hookStop = filepath.Join(dir, "ccbridge-hook-stop")
	bins.hookPretool = filepath.Join(dir, "ccbridge-hook-pretool")
	for out, pkg := range map[string]string{bins.bridge: "../cmd/bridge", bins.hookStop: "../cmd/hook-stop", bins.hookPretool: "../cmd/hook-pretool"} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build", pkg, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	stopBrowser() // web_browser_test.go
	os.RemoveAll(dir)
	os.Exit(code)
}
