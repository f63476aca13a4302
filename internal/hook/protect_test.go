package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/codexhook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A Codex session has no Claude Code deny rules to keep the model away
// from ccbridge's own files: its policy hook refuses every call that names
// one (the bot token, the config, the runtime directory's records, the
// audit log), as written, ~- or $HOME-relative, relative to the cwd,
// through a symlink, in a patch, through the variables that hold them, or
// by reading a whole tree that holds one. An ordinary call goes on.
func TestCodexPolicyDeniesCcbridgesOwnFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	root := filepath.Join(t.TempDir(), "rt")
	cfgDir := filepath.Join(home, ".config", "ccbridge")
	token := filepath.Join(home, "secrets", "discord.token")
	project := filepath.Join(home, "work", "api")
	for _, d := range []string{cfgDir, filepath.Dir(token), project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(token, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(token, filepath.Join(project, "tok")); err != nil {
		t.Fatal(err)
	}
	rules := claudehook.SessionPolicy{AuditDir: t.TempDir(), Protect: []string{root + "/bots/", cfgDir + "/", token}}
	env := map[string]string{state.EnvRuntimeDir: root, state.EnvSession: "home-web"}
	decide := func(command string) (claudehook.PreToolUseDecision, bool) {
		t.Helper()
		input, _ := json.Marshal(map[string]string{"command": command})
		payload, _ := json.Marshal(map[string]any{"session_id": "s1", "turn_id": "t1", "transcript_path": "/r.jsonl", "cwd": project,
			"hook_event_name": "PreToolUse", "model": "gpt-fake", "permission_mode": "default", "tool_name": "Bash",
			"tool_input": json.RawMessage(input), "tool_use_id": "call_1"})
		var out, errb bytes.Buffer
		Main(context.Background(), PreTool, []string{claudehook.PolicyFlag, codexhook.AgentFlag, rules.Arg()}, bytes.NewReader(payload), &out, &errb,
			func(k string) string { return env[k] })
		if out.Len() == 0 {
			return claudehook.PreToolUseDecision{}, false
		}
		var o claudehook.PreToolUseOutput
		if err := json.Unmarshal(out.Bytes(), &o); err != nil {
			t.Fatalf("%q: %v", out.String(), err)
		}
		return o.HookSpecificOutput, true
	}
	for _, cmd := range []string{
		"cat " + token,
		"cat ~/secrets/discord.token",
		`cat "$HOME/secrets/discord.token"`,
		"cat ${HOME}/secrets/discord.token | base64",
		"cat ../../secrets/discord.token",
		"cat tok",
		"head -c 100 < ../../secrets/*.token",
		"grep -r token " + cfgDir,
		"ls ~/.config/ccbridge",
		"cat " + root + "/bots/home.json",
		`cat "$CCBRIDGE_RUNTIME_DIR"/bots/*`,
		`cat "$CCBRIDGE_CONFIG"`,
		"grep -rn discord ~",
		"rg -uu token ../..",
		"tar czf /tmp/all.tgz " + home,
		"apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: ../../.config/ccbridge/config.toml\n@@\n-a\n+b\n*** End Patch\nEOF\n",
	} {
		d, ok := decide(cmd)
		if !ok || d.PermissionDecision != "deny" || !strings.Contains(d.PermissionDecisionReason, "ccbridge's own files") {
			t.Errorf("%q: %+v, %v", cmd, d, ok)
		}
	}
	for _, cmd := range []string{"ls", "go test ./...", "cat README.md", "echo $CCBRIDGE_OUTPUTS", "cat ~/.bashrc", "rm -rf build", "find . -name '*.go'", "grep -r TODO ./internal", "ls " + home,
		"apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: main.go\n@@\n-x := a\n+x := a / b // find the tree, -r\n*** End Patch\nEOF\n"} {
		if d, ok := decide(cmd); ok {
			t.Errorf("%q refused: %+v", cmd, d)
		}
	}
}

// A Claude session's Bash is kept from ccbridge's own files as Codex's
// shell is (Claude Code's deny rules stop only Read and Edit), and so is a
// file's new content that names one (a later call may run it). What a
// call only says (a description) refuses nothing, and the words of
// written text are not read as this call's paths and commands: "rm -rf /"
// there reads no tree.
func TestClaudePolicyKeepsBashFromCcbridgesOwnFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	token := filepath.Join(home, "secrets", "discord.token")
	project := filepath.Join(home, "work", "api")
	for _, d := range []string{filepath.Dir(token), project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	rules := claudehook.SessionPolicy{AuditDir: t.TempDir(), Protect: []string{token}}
	env := map[string]string{state.EnvRuntimeDir: filepath.Join(t.TempDir(), "rt"), state.EnvSession: "home-api"}
	decide := func(tool string, input map[string]any) string {
		t.Helper()
		in, _ := json.Marshal(input)
		payload, _ := json.Marshal(map[string]any{"session_id": "s1", "transcript_path": "/t.jsonl", "cwd": project,
			"hook_event_name": "PreToolUse", "permission_mode": "default", "tool_name": tool,
			"tool_input": json.RawMessage(in), "tool_use_id": "toolu_1"})
		var out, errb bytes.Buffer
		Main(context.Background(), PreTool, []string{claudehook.PolicyFlag, rules.Arg()}, bytes.NewReader(payload), &out, &errb,
			func(k string) string { return env[k] })
		if out.Len() == 0 {
			return ""
		}
		var o claudehook.PreToolUseOutput
		if err := json.Unmarshal(out.Bytes(), &o); err != nil {
			t.Fatalf("%q: %v", out.String(), err)
		}
		return o.HookSpecificOutput.PermissionDecision
	}
	for _, c := range []struct {
		tool string
		in   map[string]any
	}{
		{"Bash", map[string]any{"command": "cat ~/secrets/discord.token", "description": "Show the token"}},
		{"Bash", map[string]any{"command": "grep -r token " + home}},
		// Written now, run later by a call that names nothing (npm test).
		{"Edit", map[string]any{"file_path": filepath.Join(project, "package.json"), "old_string": "x", "new_string": `"test": "cat ~/secrets/discord.token"`}},
		{"Write", map[string]any{"file_path": filepath.Join(project, "x.sh"), "content": "cat " + token}},
	} {
		if d := decide(c.tool, c.in); d != "deny" {
			t.Errorf("%s %v: %q, want deny", c.tool, c.in, d)
		}
	}
	long := "touch long-start.txt" + strings.Repeat("; echo harmless-padding", 100)
	for tool, in := range map[string]map[string]any{
		"Bash":  {"command": long, "description": "Build it ```sh\nrm -rf /\n``` # " + token},
		"Write": {"file_path": filepath.Join(project, "clean.sh"), "content": "#!/bin/sh\ngrep -r token ~\nrm -rf /\n"},
		"Edit":  {"file_path": filepath.Join(project, "README.md"), "old_string": "x", "new_string": "clean with rm -rf / and find ~ -name x"},
	} {
		if d := decide(tool, in); d != "" {
			t.Errorf("%s %v refused: %q", tool, in, d)
		}
	}
}
