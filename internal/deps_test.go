package internal_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/ccbridge/ccbridge/"

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func list(t *testing.T, args ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestHooksDoNotImportTheDaemon keeps the hook binaries small and fast to
// start, and unable to break (or be broken by) the daemon's code.
func TestHooksDoNotImportTheDaemon(t *testing.T) {
	forbidden := []string{"internal/gateway", "internal/router", "internal/session", "internal/tmux", "internal/worktree", "internal/daemon", "internal/execx"}
	for _, p := range list(t, "-deps=false", "./cmd/hook-stop", "./cmd/hook-pretool") {
		deps := list(t, "-deps", p.ImportPath)
		for _, d := range deps {
			for _, f := range forbidden {
				if d.ImportPath == mod+f {
					t.Errorf("%s depends on %s", p.ImportPath, d.ImportPath)
				}
			}
		}
	}
}

// TestImportRules enforces style.md's layering: which packages may import
// discordgo, os/exec, flock and toml, and that leaves import no internal
// package.
func TestImportRules(t *testing.T) {
	only := map[string][]string{
		"github.com/bwmarrin/discordgo": {"internal/discord", "internal/gateway"},
		"os/exec":                       {"internal/execx"},
		"github.com/gofrs/flock":        {"internal/state"},
		"github.com/BurntSushi/toml":    {"internal/config"},
	}
	leaves := []string{"internal/config", "internal/state", "internal/execx", "internal/claudehook", "internal/redact", "internal/policy", "internal/audit"}
	for _, p := range list(t, "./...") {
		rel := strings.TrimPrefix(p.ImportPath, mod)
		if strings.HasPrefix(rel, "internal/testutil") || strings.HasPrefix(rel, "bench/") || rel == "e2e" {
			continue
		}
		for _, imp := range p.Imports {
			if allowed, ok := only[imp]; ok && !slices.Contains(allowed, rel) {
				t.Errorf("%s imports %s; only %v may", rel, imp, allowed)
			}
			if slices.Contains(leaves, rel) && strings.HasPrefix(imp, mod) {
				t.Errorf("leaf package %s imports %s", rel, imp)
			}
		}
	}
}
