package policy

import (
	"encoding/json"
	"testing"
)

func call(tool string, in map[string]any) Call {
	b, _ := json.Marshal(in)
	return Call{Tool: tool, Input: b, Cwd: "/work/app", Home: "/home/u"}
}

func bash(cmd string) Call     { return call("Bash", map[string]any{"command": cmd}) }
func file(tool, p string) Call { return call(tool, map[string]any{"file_path": p}) }

func TestRules(t *testing.T) {
	cases := []struct {
		rule string
		call Call
		want bool
	}{
		{"Bash", bash("ls"), true},
		{"Bash(git push *)", bash("git push origin main"), true},
		{"Bash(git push *)", bash("git push"), true},
		{"Bash(git push *)", bash("git pushx"), false},
		{"Bash(git push *)", bash("git status"), false},
		{"Bash(git push *)", bash("cd repo && git  push --force"), true},
		{"Bash(git push *)", bash("echo hi; git push -f | tee log"), true},
		{"Bash(rm -rf *)", bash("sudo rm -rf /tmp/x"), true},
		{"Bash(rm -rf *)", bash("rm -r x"), false},
		{"Bash(npm run test:*)", bash("npm run test --watch"), true},
		{"Bash(npm run test:*)", bash("npm run build"), false},
		{"Bash(*--force*)", bash("git push --force-with-lease"), true},
		{"Write(.env*)", file("Write", "/work/app/.env.local"), true},
		{"Write(.env*)", file("Write", "sub/.env"), true},
		{"Write(.env*)", file("Write", "/work/app/env.go"), false},
		{"Write(.env*)", file("Edit", "/work/app/.env"), false},
		{"Edit(.env*)", file("Write", "/work/app/.env"), true},
		{"Edit", file("MultiEdit", "/work/app/a.go"), true},
		{"Edit", bash("ls"), false},
		{"Edit(/src/**)", file("Edit", "/work/app/src/a/b.go"), true},
		{"Edit(/src/**)", file("Edit", "/work/app/lib/b.go"), false},
		{"Edit(docs/*.md)", file("Edit", "/work/app/docs/x.md"), true},
		{"Edit(docs/*.md)", file("Edit", "/work/app/docs/y/x.md"), false},
		{"Read(~/.ssh/**)", file("Read", "/home/u/.ssh/id_ed25519"), true},
		{"Read(//etc/passwd)", file("Read", "/etc/passwd"), true},
		{"Read(//etc/passwd)", call("Grep", map[string]any{"pattern": "x", "path": "/etc/passwd"}), true},
		{"Read(secrets/**)", file("Read", "/work/app/a/secrets/k.txt"), true},
		{"WebFetch(domain:example.com)", call("WebFetch", map[string]any{"url": "https://api.example.com/x"}), true},
		{"WebFetch(domain:example.com)", call("WebFetch", map[string]any{"url": "https://example.org/"}), false},
		{"mcp__github", call("mcp__github__create_pr", nil), true},
		{"mcp__github__*", call("mcp__github__create_pr", nil), true},
		{"mcp__github__create_pr", call("mcp__github__create_pr", nil), true},
		{"mcp__github", call("mcp__gitlab__x", nil), false},
	}
	for _, c := range cases {
		r, err := Parse(c.rule)
		if err != nil {
			t.Fatalf("%s: %v", c.rule, err)
		}
		if got := r.Match(c.call); got != c.want {
			t.Errorf("%s on %s %s = %v, want %v", c.rule, c.call.Tool, c.call.Input, got, c.want)
		}
	}
}

func TestDenyBeforeAsk(t *testing.T) {
	s, err := New([]string{"Bash(git *)"}, []string{"Bash(git push *)"})
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Check(bash("git push")); v.Decision != "deny" || v.Rule != "Bash(git push *)" {
		t.Errorf("push: %+v", v)
	}
	if v := s.Check(bash("git status")); v.Decision != "ask" || v.Rule != "Bash(git *)" {
		t.Errorf("status: %+v", v)
	}
	if v := s.Check(bash("ls")); v.Decision != "" {
		t.Errorf("ls: %+v", v)
	}
}

func TestBadRules(t *testing.T) {
	for _, s := range []string{"", "Bash(", "Bash()", "(x)", "Ba sh"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}
