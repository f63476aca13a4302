package session

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/claudehook"
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
