package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A session's Claude gets its [policy] inline, as permissions Claude Code
// enforces itself and on every hook's command line, and is denied the
// runtime directory's records and the config; nothing of it comes from a
// file the model could rewrite.
func TestSettingsCarryTheSessionPolicy(t *testing.T) {
	m, panes, store, target := newManager(t)
	m.opt.Config.Policy.Deny = []string{"Bash(rm -rf *)"}
	m.opt.Config.Policy.Ask = []string{"Bash(git push *)"}
	if _, _, err := m.Ensure(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	argv := panes.specs[0].Argv
	i := slices.Index(argv, "--settings")
	if i < 0 {
		t.Fatalf("no --settings in %q", argv)
	}
	var got claudehook.Settings
	if err := json.Unmarshal([]byte(argv[i+1]), &got); err != nil {
		t.Fatal(err)
	}
	want := claudehook.SessionPolicy{Ask: []string{"Bash(git push *)"}, Deny: []string{"Bash(rm -rf *)"}}
	for ev, ms := range claudehook.BridgeSettings("/bin/hs", "/bin/hp", cfgPromptTimeout(m)).Hooks {
		for j, mm := range ms {
			for k, h := range mm.Hooks {
				cmd := got.Hooks[ev][j].Hooks[k].Command
				rest, ok := strings.CutPrefix(cmd, h.Command+" ")
				if !ok {
					t.Fatalf("%s: %q is not the bridge hook %q", ev, cmd, h.Command)
				}
				p, found, err := claudehook.PolicyArg([]string{strings.ReplaceAll(strings.Trim(rest, "'"), `'\''`, "'")})
				p.AuditDir = ""
				// Only the policy hook is handed ccbridge's own files, which
				// it keeps every call away from (Bash too), not only Read
				// and Edit.
				policyHook := strings.HasSuffix(h.Command, " "+claudehook.PolicyFlag)
				if policyHook != slices.Contains(p.Protect, filepath.Join(store.Dir.Root(), "bots")+"/") || policyHook != slices.Contains(p.Protect, "/etc/ccbridge.toml") {
					t.Errorf("%s: ccbridge's own files on the command line = %q", ev, p.Protect)
				}
				p.Protect = nil
				if !found || err != nil || !reflect.DeepEqual(p, want) {
					t.Errorf("%s: policy on the command line = %+v (%v, %v)", ev, p, found, err)
				}
			}
		}
	}
	if got.Permissions == nil {
		t.Fatal("no permissions")
	}
	if !slices.Equal(got.Permissions.Ask, want.Ask) || !slices.Contains(got.Permissions.Deny, "Bash(rm -rf *)") {
		t.Errorf("permissions = %+v", got.Permissions)
	}
	root := store.Dir.Root()
	for _, rule := range []string{"Read(/" + filepath.Join(root, "bots") + "/**)", "Edit(/" + filepath.Join(root, "policies") + "/**)",
		"Read(//etc/ccbridge.toml)", "Edit(//etc/ccbridge.toml)"} {
		if !slices.Contains(got.Permissions.Deny, rule) {
			t.Errorf("deny lacks %s: %q", rule, got.Permissions.Deny)
		}
	}
	for _, r := range got.Permissions.Deny {
		if strings.Contains(r, "/files") {
			t.Errorf("%s keeps Claude from the uploads and outputs", r)
		}
	}
}

// worktreeTrees is a git stand-in: the repository root is fixed and a
// worktree is a plain directory.
type worktreeTrees struct {
	Trees
	root string
}

func (w worktreeTrees) Root(context.Context, string) (string, error) { return w.root, nil }
func (w worktreeTrees) Head(context.Context, string) (string, error) { return "abc123", nil }
func (w worktreeTrees) Add(_ context.Context, _, path, _, _ string) error {
	return os.MkdirAll(path, 0o755)
}

// A folder opened inside a project of a monorepo keeps that project's
// [policy] when it runs in a worktree: the worktree lies under the git
// root (outside the project), yet the policy follows the folder opened.
func TestWorktreeSessionKeepsTheOpenedFoldersProjectPolicy(t *testing.T) {
	m, panes, _, _ := newManager(t)
	mono := t.TempDir()
	proj := filepath.Join(mono, "proj")
	sub := filepath.Join(proj, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &m.opt.Config.Servers[0].Projects[0]
	p.Path = proj
	p.Policy.Deny = []string{"Bash(curl *)"}
	reg, err := state.OpenRegistry(filepath.Join(t.TempDir(), "durable"))
	if err != nil {
		t.Fatal(err)
	}
	m.opt.Registry = reg
	m.opt.Trees = worktreeTrees{root: mono}
	target := Target{Key: "home-open-5", Server: "home", Project: OpenedProject, ChannelID: "100000000000000003",
		ThreadID: "100000000000000005", ThreadName: "t", Dir: sub, Isolation: "worktree"}
	if _, _, err := m.Ensure(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	spec := panes.specs[0]
	if !strings.HasPrefix(spec.Dir, filepath.Join(mono, ".claude", "worktrees")) {
		t.Fatalf("session runs in %s, not a worktree", spec.Dir)
	}
	argv := spec.Argv
	var got claudehook.Settings
	if err := json.Unmarshal([]byte(argv[slices.Index(argv, "--settings")+1]), &got); err != nil {
		t.Fatal(err)
	}
	if got.Permissions == nil || !slices.Contains(got.Permissions.Deny, "Bash(curl *)") {
		t.Errorf("the project's deny rule is lost in the worktree: %+v", got.Permissions)
	}
}
