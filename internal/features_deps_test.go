package internal_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// features are the packages that hold what ccbridge does, once, for every
// front end (issue 27 §1, docs: front-ends.md): landing, opened folders,
// schedules, catch-up's books, voice review, the /sessions listing and
// /usage with its Continue at reset offer, and the web view's links.
var features = []string{"internal/land", "internal/opened", "internal/schedule", "internal/intake", "internal/voice", "internal/conversations", "internal/usage", "internal/weblink"}

// TestFeaturesKnowNoFrontEnd: a feature package depends on no front end,
// no chat library and no daemon package; it takes what it needs as small
// interfaces and answers with chat's neutral vocabulary. The router, the
// front ends' dispatch, uses each of them rather than a copy.
func TestFeaturesKnowNoFrontEnd(t *testing.T) {
	forbidden := []string{mod + "internal/discord", mod + "internal/gateway", mod + "internal/telegram", mod + "internal/mcp",
		mod + "internal/router", mod + "internal/daemon", mod + "internal/panel", mod + "internal/web"}
	for _, f := range features {
		for _, d := range list(t, "-deps", "./"+f) {
			if slices.Contains(forbidden, d.ImportPath) || strings.Contains(d.ImportPath, "discordgo") || strings.HasPrefix(d.ImportPath, "github.com/modelcontextprotocol/") {
				t.Errorf("%s depends on %s", f, d.ImportPath)
			}
		}
	}
	router := list(t, "./internal/router")[0]
	for _, f := range features {
		if !slices.Contains(router.Imports, mod+f) {
			t.Errorf("internal/router does not use %s", f)
		}
	}
}

// maxRouterLines bounds the router's code (test files aside). It held
// every feature, 6,308 lines, before they moved to their packages; what
// it keeps is the dispatch: event → guard → feature → answer.
const maxRouterLines = 6000

func TestRouterStaysTheDispatch(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("router", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines > maxRouterLines {
		t.Errorf("internal/router holds %d lines of code, more than %d: a feature belongs in its own package (%s)", lines, maxRouterLines, strings.Join(features, ", "))
	}
}
