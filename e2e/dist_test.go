//go:build e2e

package e2e

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDistArchiveInstallsWithoutGo builds this platform's release archive
// with `make dist`, unpacks it and runs its install.sh with no Go on PATH:
// the prebuilt, stripped binaries are installed, print the stamped version,
// and a starter config that `config check` does not call OK is left for
// setup. (`make test` builds all four platforms' archives.)
func TestDistArchiveInstallsWithoutGo(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	dist := t.TempDir()
	const version = "v0.0.0-e2e"
	platform := "linux/" + runtime.GOARCH
	mk := exec.Command("make", "--no-print-directory", "dist", "DIST_DIR="+dist, "DIST_PLATFORMS="+platform, "VERSION="+version)
	mk.Dir = ".."
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make dist: %v\n%s", err, out)
	}
	name := "ccbridge-" + version + "-linux-" + runtime.GOARCH
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil || !strings.Contains(string(sums), name+".tar.gz") {
		t.Fatalf("SHA256SUMS: %q %v", sums, err)
	}
	unpacked := t.TempDir()
	if out, err := exec.Command("tar", "-C", unpacked, "-xzf", filepath.Join(dist, name+".tar.gz")).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	root := filepath.Join(unpacked, name)
	for _, f := range []string{"README.md", "LICENSE", "docs/SECURITY.md", "config.example.toml", "install.sh", "SHA256SUMS",
		"bin/ccbridge", "bin/ccbridge-hook-stop", "bin/ccbridge-hook-pretool"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("archive lacks %s", f)
		}
	}
	// The README's links into the archive resolve, and every file is summed.
	sumsIn, _ := os.ReadFile(filepath.Join(root, "SHA256SUMS"))
	for _, f := range []string{"LICENSE", "docs/SECURITY.md"} {
		if !strings.Contains(string(sumsIn), " "+f+"\n") {
			t.Errorf("the archive's SHA256SUMS lacks %s:\n%s", f, sumsIn)
		}
	}
	for _, b := range []string{"ccbridge", "ccbridge-hook-stop", "ccbridge-hook-pretool"} {
		f, err := elf.Open(filepath.Join(root, "bin", b))
		if err != nil {
			t.Fatal(err)
		}
		if f.Section(".symtab") != nil {
			t.Errorf("%s is not stripped", b)
		}
		f.Close()
	}

	// A PATH with what install.sh needs and no Go.
	path := noGoPath(t)
	home := t.TempDir()
	cmd := exec.Command("./install.sh")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "HOME="+home, "PREFIX="+filepath.Join(home, "prefix"), "XDG_CONFIG_HOME=", "PATH="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh from the archive: %v\n%s", err, out)
	}
	bin := filepath.Join(home, "prefix", "bin")
	for _, want := range []string{"installing the prebuilt ccbridge " + version, "installed: " + filepath.Join(bin, "ccbridge-hook-pretool"),
		`export PATH="` + bin + `:$PATH"`, bin + "/ccbridge setup"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("install.sh output lacks %q:\n%s", want, out)
		}
	}
	got, err := exec.Command(filepath.Join(bin, "ccbridge"), "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != "ccbridge "+version {
		t.Errorf("ccbridge --version: %q %v", got, err)
	}
	// The starter config is not a working one until setup has run.
	cfg := filepath.Join(home, ".config", "ccbridge", "config.toml")
	check := exec.Command(filepath.Join(bin, "ccbridge"), "config", "check", "--config", cfg)
	if out, err := check.CombinedOutput(); err == nil || !strings.Contains(string(out), "run `ccbridge setup`") {
		t.Errorf("config check on the starter config: %v\n%s", err, out)
	}

	// A damaged archive stops the install.
	_ = os.WriteFile(filepath.Join(root, "bin", "ccbridge-hook-stop"), []byte("#!/bin/sh\n"), 0o755)
	cmd = exec.Command("./install.sh")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "HOME="+home, "PREFIX="+filepath.Join(home, "prefix"), "XDG_CONFIG_HOME=", "PATH="+path)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "do not match SHA256SUMS") {
		t.Errorf("damaged archive: %v\n%s", err, out)
	}
}

// noGoPath returns a PATH of directories that hold the tools install.sh
// uses but no go binary; it fails the test when it cannot.
func noGoPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range []string{"bash", "sh", "tmux", "git", "sed", "cmp", "install", "mv", "mkdir", "chmod", "cat", "cut", "dirname", "sha256sum", "rm", "mktemp"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s is not installed", tool)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
		t.Fatal("go on the test PATH")
	}
	return dir
}
