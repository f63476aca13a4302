package session

import (
	"context"
	"strings"
	"testing"
)

// A /screen key is pressed only into the dialog it was drawn over: a Codex
// session's dialogs are told apart as Codex draws them (issue 29), each
// with its highlight; its composer is no dialog. A Claude session's are
// read as they always were.
func TestScreenDialogIsTheSessionsAgents(t *testing.T) {
	m, _, target := newCodexManager(t)
	ctx := context.Background()
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	trust := "  Folder access\n  /home/u/proj\n  Trust this folder? Codex can read, edit, and run files here.\n\n" +
		"› 1. Trust and continue\n  2. Back to Agent Command Center\n  enter continue · esc back\n"
	moved := strings.Replace(strings.Replace(trust, "› 1.", "  1.", 1), "  2. Back", "› 2. Back", 1)
	approval := "› run it\n\n• Running touch x\n" + codexApproval
	seen := map[string]string{}
	for name, screen := range map[string]string{"trust": trust, "moved": moved, "approval": approval, "composer": codexIdle} {
		d, err := m.ScreenDialog(target.Key, screen)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if (d == "") != (name == "composer") {
			t.Errorf("%s reads as dialog %q", name, d)
		}
		if other, ok := seen[d]; ok {
			t.Errorf("%s and %s read as the same dialog %q", name, other, d)
		}
		seen[d] = name
	}

	claude, _, _, ct := newManager(t)
	if _, _, err := claude.Ensure(ctx, ct); err != nil {
		t.Fatal(err)
	}
	screen := strings.Repeat("─", 40) + "\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel\n"
	if d, err := claude.ScreenDialog(ct.Key, screen); err != nil || d == "" || d != DialogText(screen) {
		t.Errorf("Claude's dialog = %q, %v; want %q", d, err, DialogText(screen))
	}
}
