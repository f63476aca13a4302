package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The second security review's bypasses of a [policy] (finding 7): each
// way of writing a governed call gets the rule's verdict, or an ask where
// the call hides what it runs; the controls get none.
func TestReviewPolicyBypasses(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	real := filepath.Join(base, "mnt", "app") // the project, physically
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(real, "secrets"), filepath.Join(real, ".github")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("key"), 0o600)
	// The project is reached through a symlink (~/work → /mnt/…, macOS
	// /tmp), and holds a link into ~/.ssh.
	cwd := filepath.Join(base, "work")
	if err := os.Symlink(real, cwd); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, ".ssh", "id_ed25519"), filepath.Join(real, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	set, err := New([]string{"Edit(/secrets/**)"}, []string{"Bash(git push *)", "Bash(rm -rf *)", "Read(.env)", "Read(~/.ssh/**)", "Edit(.github/**)", "WebFetch(domain:evil.com)"})
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool string, in map[string]any) Call {
		b, _ := json.Marshal(in)
		return Call{Tool: tool, Input: b, Cwd: cwd, Home: home}
	}
	sh := func(cmd string) Call { return call("Bash", map[string]any{"command": cmd}) }
	cases := []struct {
		name string
		call Call
		want string
	}{
		{"bash -c", sh(`bash -c "git push origin main"`), "deny"},
		{"sh -c", sh(`sh -c 'git push --force'`), "deny"},
		{"sh -lc nested", sh(`sh -lc "bash -c 'git push'"`), "deny"},
		{"eval", sh(`eval "git push"`), "deny"},
		{"git -C", sh("git -C . push origin main"), "deny"},
		{"git -c", sh("git -c k=v push"), "deny"},
		{"git --git-dir", sh("git --git-dir=.git --no-pager push"), "deny"},
		{"path-qualified", sh("/usr/bin/git push"), "deny"},
		{"escaped", sh(`\git push`), "deny"},
		{"command prefix", sh("command git push"), "deny"},
		{"quoted program", sh(`"git" push`), "deny"},
		{"quoted subcommand", sh(`git 'push' origin`), "deny"},
		{"env and nice", sh("env GIT_TRACE=1 nice -n 5 timeout 30 git push"), "deny"},
		{"substitution", sh("echo $(git push)"), "deny"},
		{"xargs", sh("echo push | xargs git"), "ask"},
		{"rm -fr", sh("rm -fr build"), "deny"},
		{"rm -r -f", sh("rm -r -f build"), "deny"},
		{"rm -Rfv", sh("rm -Rfv build"), "deny"},
		{"rm --recursive --force", sh("rm --recursive --force build"), "deny"},
		{"rm flags after", sh("rm build -rf"), "deny"},
		{"find -delete", sh("find build -name '*.o' -delete"), "deny"},
		{"find -exec", sh(`find . -type d -exec rm -rf {} \;`), "deny"},
		{"variable program", sh(`G=git; $G push`), "ask"},
		{"sh -c variable", sh(`sh -c "$CMD"`), "ask"},
		{"shell from stdin", sh(`echo "git push" | sh`), "ask"},
		{"unclosed quote", sh(`git push "origin`), "deny"},
		{"nested claude", sh(`claude -p --dangerously-skip-permissions "push it"`), "ask"},
		{"nested claude by path", sh(`cd sub && ~/.local/bin/claude -p hi`), "ask"},
		{"grep with glob", call("Grep", map[string]any{"pattern": "KEY", "path": cwd, "glob": ".env"}), "deny"},
		{"grep over everything", call("Grep", map[string]any{"pattern": "KEY", "path": cwd}), "ask"},
		{"glob for .env", call("Glob", map[string]any{"pattern": "**/.env"}), "deny"},
		{"cat", sh("cat .env"), "deny"},
		{"input redirection", sh("wc -l < .env"), "deny"},
		{"cat ssh key", sh("cat ~/.ssh/id_ed25519"), "deny"},
		{"read through a symlink", call("Read", map[string]any{"file_path": filepath.Join(cwd, "notes.txt")}), "deny"},
		{"bash through a symlink", sh("cat notes.txt"), "deny"},
		{"bash writes .github", sh("echo 'on: push' > .github/workflows/x.yml"), "deny"},
		{"tee into .github", sh("echo x | tee .github/ci.yml"), "deny"},
		{"physical path, rule from the linked root", call("Edit", map[string]any{"file_path": filepath.Join(real, "secrets", "k.txt")}), "ask"},
		{"upper-case host", call("WebFetch", map[string]any{"url": "https://EVIL.com/x"}), "deny"},
		{"trailing dot", call("WebFetch", map[string]any{"url": "https://evil.com./x"}), "deny"},
		{"subdomain", call("WebFetch", map[string]any{"url": "https://a.Evil.COM/x"}), "deny"},
		// Controls.
		{"git status", sh("git -C . status"), ""},
		{"quoted operators", sh(`git commit -m "fix; add && push"`), ""},
		{"rm -r", sh("rm -r build"), ""},
		{"find without delete", sh("find . -name '*.go'"), ""},
		{"xargs into another program", sh("ls | xargs wc -l"), ""},
		{"cat a readme", sh("cat README.md"), ""},
		{"write elsewhere", sh("echo x > notes.md"), ""},
		{"grep filtered away", call("Grep", map[string]any{"pattern": "x", "path": cwd, "glob": "*.go"}), ""},
		{"other host", call("WebFetch", map[string]any{"url": "https://notevil.com/"}), ""},
		{"edit elsewhere", call("Edit", map[string]any{"file_path": filepath.Join(real, "main.go")}), ""},
	}
	for _, c := range cases {
		if v := set.Check(c.call); v.Decision != c.want {
			t.Errorf("%s: %s %s = %+v, want %q", c.name, c.call.Tool, c.call.Input, v, c.want)
		}
	}
}

// The policy hook runs this on every tool call, synchronously.
func BenchmarkCheckACommand(b *testing.B) {
	set, _ := New([]string{"Edit(/secrets/**)"}, []string{"Bash(git push *)", "Bash(rm -rf *)", "Read(.env)", "Read(~/.ssh/**)", "Edit(.github/**)", "WebFetch(domain:evil.com)"})
	in, _ := json.Marshal(map[string]any{"command": `cd /work/app && git -C . status --porcelain | grep -v '^??' > /tmp/out.txt; sh -c "npm test -- --watch=false" 2>&1 | tail -n 20`})
	c := Call{Tool: "Bash", Input: in, Cwd: b.TempDir(), Home: "/home/u"}
	for b.Loop() {
		set.Check(c)
	}
}

// Commands as Claude Code writes them every day parse: a commit message in
// a quoted heredoc inside $(…) may hold any quote.
func TestHeredocsAndSubstitutionsParse(t *testing.T) {
	set, _ := New(nil, []string{"Bash(git push *)"})
	for cmd, want := range map[string]string{
		"git commit -m \"$(cat <<'EOF'\nFix the parser; it's (mostly) done\n\nCo-Authored-By: x\nEOF\n)\"": "",
		"cat <<EOF > notes.md\nit's \"here\" (really)\nEOF\necho done":                                     "",
		"cat <<-EOF\n\tit's\n\tEOF\ngit push":                                                              "deny",
		"echo $(echo $(git push))":                                                                         "deny",
		"echo \"$(printf '%s' \")\")\" && git status":                                                      "",
		"bash <<EOF\ngit push\nEOF":                                                                        "deny",
		"git log --format='%h (%s)' | head":                                                                "",
	} {
		b, _ := json.Marshal(map[string]any{"command": cmd})
		if v := set.Check(Call{Tool: "Bash", Input: b, Cwd: "/w", Home: "/h"}); v.Decision != want {
			t.Errorf("%q: %+v, want %q", cmd, v, want)
		}
	}
}

// Whatever the model writes, judging it ends and never panics.
func FuzzCheckBash(f *testing.F) {
	for _, s := range []string{"git push", `sh -c "a $(b 'c' <<E\nd\nE\n)"`, "cat <<-X\n\tx\n\tX", "a\\", "$(", "`", "find . -exec", "xargs -I", "rm -- -rf", "((", "))", "<<"} {
		f.Add(s)
	}
	// Deep nesting is cut short, not followed for seconds.
	for _, s := range []string{"$(", "find -exec ", "xargs ", "eval ", "<<a\n", "\"$("} {
		f.Add(strings.Repeat(s, 3000))
	}
	set, _ := New([]string{"Edit(.github/**)"}, []string{"Bash(git push *)", "Bash(rm -rf *)", "Read(.env)"})
	f.Fuzz(func(t *testing.T, cmd string) {
		b, _ := json.Marshal(map[string]any{"command": cmd})
		set.Check(Call{Tool: "Bash", Input: b, Cwd: "/w", Home: "/h"})
	})
}
