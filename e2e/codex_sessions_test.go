//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakeresponses"
)

// codexHomeOf is the Codex home newCodexBridge points the panes at.
func codexHomeOf(b *bridge) (codexHome, home string) {
	base := filepath.Dir(b.runtime)
	return filepath.Join(base, "codex-home"), filepath.Join(base, "codex-user")
}

// Files both ways with the real Codex CLI, whose sandbox here may write
// nothing outside the project (the user's config excludes /tmp, where the
// runtime directory lies): an owner's attachment reaches Codex by its path
// in the prompt and Codex reads it; Codex saves a file in the session's
// outputs folder (ccbridge lets it write there, and there only) and names
// it with [DISCORD_ATTACH: …], and the file comes with the reply.
func TestCodexFilesBothWays(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	codexHome, _ := codexHomeOf(b)
	f, err := os.OpenFile(filepath.Join(codexHome, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}

	fake.Script("SCN_CX_IN", fakeresponses.Step{Dynamic: func(r fakeresponses.Request) fakeresponses.Step {
		_, path, _ := strings.Cut(r.LastUserText, "Attached files:\n- ")
		return fakeresponses.Exec("Reading it.", "cat '"+strings.TrimSpace(path)+"'")
	}})
	b.say(p, "SCN_CX_IN read the note", fakediscord.File{Name: "note.txt", ContentType: "text/plain", Data: []byte("the-note-body")})
	b.waitReply(p, "the-note-body")

	outputs, err := b.store.Dir.Outputs(p.key)
	if err != nil {
		t.Fatal(err)
	}
	fake.Script("SCN_CX_OUT", fakeresponses.Exec("Writing it.", "printf report-body > '"+filepath.Join(outputs, "out.txt")+"'"),
		fakeresponses.Text("Here it is. [DISCORD_ATTACH: out.txt]"))
	b.say(p, "SCN_CX_OUT send me the report")
	reply := b.waitReply(p, "Here it is.")
	if len(reply.Files) != 1 || reply.Files[0].Name != "out.txt" || string(reply.Files[0].Data) != "report-body" {
		t.Fatalf("reply %q with files %+v", reply.Content, reply.Files)
	}
	// Only that folder: the runtime directory beside it stays out of reach.
	fake.Script("SCN_CX_BESIDE", fakeresponses.Exec("Trying.", "printf x > '"+filepath.Join(b.runtime, "files", "beside.txt")+"' && echo wrote-beside"))
	b.say(p, "SCN_CX_BESIDE write beside")
	done := b.waitReply(p, "Done. Last tool output:")
	if _, err := os.Stat(filepath.Join(b.runtime, "files", "beside.txt")); err == nil || strings.Contains(done.Content, "wrote-beside") {
		t.Errorf("Codex wrote outside its outputs folder: %q", done.Content)
	}
}

// /sessions in a Codex project lists the Codex conversations of its
// folder, here one a person had with Codex by hand (codex exec, the same
// Codex home), with Resume but no Fork; Resume continues it in a thread
// with `codex resume <id>`: the model gets the earlier turn, and the
// thread's session is that conversation.
func TestCodexSessionsListsAndResumes(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	codexHome, home := codexHomeOf(b)
	cmd := exec.Command(codexBinary(t), "exec", "--skip-git-repo-check", "remember the word pelican")
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "CODEX_HOME="+codexHome, "HOME="+home, codexKeyEnv+"=sk-test-fake-0123456789")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("codex exec: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("rollouts %q", files)
	}
	orig := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	orig = orig[len(orig)-36:]

	list := b.command(p, "sessions", nil, "Recent conversations")
	if !strings.HasPrefix(list.Content, "**Running Codex sessions in `") || !strings.Contains(list.Content, "“remember the word pelican” — 1 turn(s)") {
		t.Fatalf("/sessions = %q", list.Content)
	}
	for _, id := range list.CustomIDs() {
		if strings.Contains(id, "|ss|fork|") {
			t.Errorf("a Fork button for a Codex conversation: %q", list.CustomIDs())
		}
	}
	th := threadOf(p, b.clickFor(list, "|ss|resume|"))
	th.speaker = p.speaker
	b.waitReply(th, "Resumed the conversation “remember the word pelican” (1 turn(s))")
	b.say(th, "what was the word")
	b.waitReply(th, "ok: what was the word")
	r := fake.WaitRequest(t, long, "the resumed prompt", func(r fakeresponses.Request) bool { return r.LastUserText == "what was the word" })
	if input, _ := json.Marshal(r.Body["input"]); !strings.Contains(string(input), "remember the word pelican") {
		t.Errorf("the resumed conversation did not carry the earlier turn: %s", input)
	}
	if id := b.waitSessionID(th.key); id != orig {
		t.Errorf("resumed as %s, want %s", id, orig)
	}
}

// A message sent while Codex works is injected into its running turn
// (agents.md §1.4), a continuation under the same turn_id: with progress =
// "live" it gets a progress card of its own while its command runs, as a
// Claude turn would, and
// the turn, longer than attention_turn, ends with the owner's ping naming
// Codex.
func TestCodexContinuationHasItsCardAndPing(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	b.reconfigure(func(cfg string) string {
		return strings.Replace(cfg, "  agent = \"codex\"\n", "  agent = \"codex\"\n  progress = \"live\"\n  attention_turn = \"3s\"\n", 1)
	})
	fake.Script("SCN_CX_LONG", fakeresponses.Exec("Working on A.", "sleep 5 && echo slept"), fakeresponses.Text("A done."))
	fake.Script("SCN_CX_MORE", fakeresponses.Exec("Looking at B.", "sleep 4 && echo b-out"))
	b.say(p, "SCN_CX_LONG start")
	b.waitReply(p, "Working on A.") // the first card, while the command sleeps
	more := b.say(p, "SCN_CX_MORE and this too")
	b.waitReaction(more, "✅")
	b.waitReply(p, "Done. Last tool output:")
	ping := b.waitReply(p, "Codex is done (the turn ran")
	if got := b.srv.Mentioned(ping.ID); len(got) != 1 || got[0] != b.owner.ID {
		t.Errorf("ping %q notifies %v", ping.Content, got)
	}
	var first, second bool
	deadline := time.Now().Add(long)
	for !(first && second) && time.Now().Before(deadline) {
		first, second = false, false
		for _, m := range b.botMessages(p.channel) {
			drawn := strings.Join(append(m.History, m.Content), "\n")
			if !strings.Contains(drawn, "⚙️") {
				continue
			}
			a, bb := strings.Contains(drawn, "Working on A."), strings.Contains(drawn, "Looking at B.")
			first = first || (a && !bb)
			second = second || (bb && !a)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !first || !second {
		t.Errorf("want a card for the turn and one for its continuation; channel %q", b.contents(p.channel))
	}
}
