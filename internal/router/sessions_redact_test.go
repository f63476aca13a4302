package router

import (
	"strings"
	"testing"
)

// A thread named after a first prompt holding a token at its cut shows
// no part of it: the name is masked before it is cut.
func TestThreadTitleMasksBeforeTheCut(t *testing.T) {
	tok := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	for pad := 60; pad < maxThreadName; pad += 4 {
		name := threadTitle("", strings.Repeat("w", pad)+" "+tok+" and more", "x")
		if strings.Contains(name, "ghp_A1b2") {
			t.Fatalf("the token's head is in the thread name: %q", name)
		}
	}
}
