package hook

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A hand-started Claude's policy hook that finds only a runtime directory
// it must refuse (planted by another user, shared, a symlink) cannot read
// which rules hold: it asks rather than letting every call through
// (review 3, finding 11).
func TestReview3HookAsksWhenTheRuntimeDirIsRefused(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o755)
	env := map[string]string{state.EnvRuntimeDir: root}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), PreTool, []string{claudehook.PolicyFlag, claudehook.GlobalFlag}, strings.NewReader(bashCall(t.TempDir(), "git push")), &out, &errb, func(k string) string { return env[k] }); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	d := decision(t, out.String())
	if d.PermissionDecision != "ask" || !strings.Contains(d.PermissionDecisionReason, "runtime directory") {
		t.Fatalf("decision %+v (stderr %q)", d, errb.String())
	}
}
