package internal_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// frontEnds are the packages that talk to people. None may learn which
// agent runs in a pane (front-ends.md, issue 29): that is the core's.
var frontEnds = []string{"router", "discord", "gateway", "telegram", "mcp", "panel", "web"}

// agentWord finds front-end code that names an agent's specifics: the
// adapters, the hooks' wire packages, the agent keys of the config and of
// the session record, or a choice made on an agent's name. A front end
// may carry the name as opaque text (mcp's agent argument into
// session.Target, session.Status.AgentName out to the client) but never
// compare it.
var agentWord = regexp.MustCompile(`\bAgentCodex\b|\bAgentClaude\b|\bAgentName\(|\.Agent\b|"codex"|\bcodexhook\b|internal/agent\b|` +
	`\b(AgentName|DefaultAgent)\s*[!=]=|[!=]=\s*[\w.]*\b(AgentName|DefaultAgent)\b|case\s+[\w.]*\bDefaultAgent\b`)

// TestFrontEndsKnowNoAgent: no front end imports the agent seam or an
// adapter, nor reads which agent a project or session has. (Claude's hook
// wire types, claudehook, still serve as the cards' vocabulary in router,
// mcp and web: older than the seam.)
func TestFrontEndsKnowNoAgent(t *testing.T) {
	for _, fe := range frontEnds {
		for _, p := range list(t, "./internal/"+fe+"/...") {
			for _, imp := range p.Imports {
				if strings.HasPrefix(imp, mod+"internal/agent") || imp == mod+"internal/codexhook" {
					t.Errorf("%s imports %s", p.ImportPath, imp)
				}
			}
		}
		files, _ := filepath.Glob(filepath.Join(fe, "*.go"))
		more, _ := filepath.Glob(filepath.Join(fe, "*", "*.go"))
		for _, f := range append(files, more...) {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				if agentWord.MatchString(line) {
					t.Errorf("%s:%d names an agent: %s", f, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
}
