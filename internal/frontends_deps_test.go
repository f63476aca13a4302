package internal_test

import (
	"slices"
	"strings"
	"testing"
)

// TestFrontEndsApart keeps the two front ends apart (docs: front-ends.md):
// the MCP server depends on no Discord package, and the Discord front end
// on no MCP package. Both reach the core (session, prompt, state).
func TestFrontEndsApart(t *testing.T) {
	discord := []string{mod + "internal/discord", mod + "internal/gateway", mod + "internal/router", mod + "internal/panel", "github.com/bwmarrin/discordgo"}
	for _, d := range list(t, "-deps", "./internal/mcp") {
		for _, f := range discord {
			if d.ImportPath == f {
				t.Errorf("internal/mcp depends on %s", f)
			}
		}
	}
	for _, front := range []string{"./internal/router", "./internal/gateway", "./internal/discord"} {
		for _, d := range list(t, "-deps", front) {
			if d.ImportPath == mod+"internal/mcp" || strings.HasPrefix(d.ImportPath, "github.com/modelcontextprotocol/") {
				t.Errorf("%s depends on %s", front, d.ImportPath)
			}
		}
	}
	// The intake's books are core: no front end in them.
	for _, d := range list(t, "-deps", "./internal/intake") {
		if slices.Contains(discord, d.ImportPath) || d.ImportPath == mod+"internal/mcp" {
			t.Errorf("internal/intake depends on %s", d.ImportPath)
		}
	}
	// One decide step: both front ends call prompt.Decide.
	for _, front := range []string{"./internal/router", "./internal/mcp"} {
		found := false
		for _, d := range list(t, "-deps", front) {
			found = found || d.ImportPath == mod+"internal/prompt"
		}
		if !found {
			t.Errorf("%s does not use internal/prompt", front)
		}
	}
}

// TestGuardIsCore: the guard that binds every acting control to its
// message is core: it depends on no front end and on no daemon package,
// and the shared vocabulary (chat, state, redact) is all it needs.
func TestGuardIsCore(t *testing.T) {
	allowed := map[string]bool{mod + "internal/guard": true, mod + "internal/chat": true, mod + "internal/state": true, mod + "internal/redact": true}
	for _, d := range list(t, "-deps", "./internal/guard") {
		if strings.HasPrefix(d.ImportPath, mod) && !allowed[d.ImportPath] || strings.Contains(d.ImportPath, "discordgo") {
			t.Errorf("internal/guard depends on %s", d.ImportPath)
		}
	}
}
