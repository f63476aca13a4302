package session

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/state"
)

// A Codex session may write its session's outputs folder and that folder
// alone beyond its workspace (--add-dir: Codex's sandbox otherwise
// refuses it), and is told, as Claude is, to save a file for the chat
// there and name it with [DISCORD_ATTACH: …] (developer_instructions, a
// -c override: the user's config is not written).
func TestCodexMayWriteItsOutputsFolder(t *testing.T) {
	m, panes, target := newCodexManager(t)
	if _, _, err := m.Ensure(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	outputs, err := m.opt.Store.Dir.Outputs(target.Key)
	if err != nil {
		t.Fatal(err)
	}
	argv := panes.specs[0].Argv
	i := slices.Index(argv, "--add-dir")
	if i < 0 || i+1 >= len(argv) || argv[i+1] != outputs || strings.Count(strings.Join(argv, " "), "--add-dir") != 1 {
		t.Errorf("no --add-dir %s alone in %q", outputs, argv)
	}
	j := slices.IndexFunc(argv, func(a string) bool { return strings.HasPrefix(a, "developer_instructions=") })
	if j < 1 || argv[j-1] != "-c" || !strings.Contains(argv[j], outputs) || !strings.Contains(argv[j], "[DISCORD_ATTACH: <file name>]") {
		t.Errorf("no instructions naming the outputs folder in %q", argv)
	}
}

// A fork asked of a Codex session (/fork, a Fork button) is refused
// before anything starts: Codex cannot start on a copy, and `codex resume`
// would put a second Codex on the original conversation.
func TestCodexRefusesAFork(t *testing.T) {
	m, panes, target := newCodexManager(t)
	reg, err := state.OpenRegistry(filepath.Join(t.TempDir(), "durable"))
	if err != nil {
		t.Fatal(err)
	}
	m.opt.Registry = reg
	if _, err := reg.Sessions.Update(context.Background(), target.Key, func(g *state.Registered) error { g.ForkOf = "conv-1"; return nil }); err != nil {
		t.Fatal(err)
	}
	target.Resume = "conv-1"
	if _, _, err := m.Ensure(context.Background(), target); !errors.Is(err, ErrNotWithAgent) {
		t.Fatalf("Ensure = %v, want ErrNotWithAgent", err)
	}
	if len(panes.specs) != 0 {
		t.Errorf("started %q", panes.specs[0].Argv)
	}
}
