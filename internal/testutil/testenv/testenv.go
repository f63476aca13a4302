// Package testenv holds the test-only policy shared by every tier: when a
// test may skip, and how to find the tools the tiers need.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// EnvDisallowSkip, set to 1 (as CI does), turns every skip into a failure so
// that a missing tool cannot silently drop a tier.
const EnvDisallowSkip = "CCBRIDGE_TEST_DISALLOW_SKIP"

// SkipUnlessAllowed skips the test with reason, or fails it when skipping is
// disallowed.
func SkipUnlessAllowed(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv(EnvDisallowSkip) == "1" {
		t.Fatalf("%s (skipping is disallowed by %s=1)", reason, EnvDisallowSkip)
	}
	t.Skip(reason)
}

// NeedTool returns the path of a program on PATH, or skips (or fails) the test.
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		SkipUnlessAllowed(t, name+" is not installed")
	}
	return p
}
