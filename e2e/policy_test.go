//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

const policyTOML = "[policy]\nask = [\"Bash(git push *)\", \"Write(.env*)\"]\ndeny = [\"Bash(rm -rf *)\"]\n"

// auditEntries waits until the audit log holds an entry that pred accepts
// and returns the whole log.
func (b *bridge) waitAudit(what string, pred func(audit.Entry) bool) []audit.Entry {
	b.t.Helper()
	dir := filepath.Join(b.stateDir, "ccbridge")
	deadline := time.Now().Add(long)
	for {
		es, _ := audit.Last(dir, 1000)
		for _, e := range es {
			if pred(e) {
				return es
			}
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no audit entry for %s in %+v", what, es)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// In acceptEdits, a Write that the mode allows without asking still gets a
// card when an ask rule covers it, and runs once allowed from Discord; a
// deny rule refuses a command with the rule named and the turn goes on.
// The audit log records the policy's decisions and the Discord Allow.
func TestPolicyAskAndDenyInAcceptEdits(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, policyTOML)
	setMode(t, b, "acceptEdits")
	p := b.projects[0]

	env := filepath.Join(p.dir, ".env.local")
	b.model.Script("SCN_POL_ASK", fakemodel.Tool("", "Write", map[string]any{"file_path": env, "content": "API_URL=http://localhost\n"}))
	b.say(p, "SCN_POL_ASK")
	card := b.waitCard(p, "the card the ask rule raises", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, ".env.local") })
	if !strings.Contains(card.Content, "policy rule `Write(.env*)`") {
		t.Errorf("the card does not name the rule: %q", card.Content)
	}
	waitMode(t, b, p, "acceptEdits")
	if _, err := os.Stat(env); err == nil {
		t.Fatal("the file was written before anyone answered")
	}
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitCardText(card, "Allowed** by")
	b.waitReply(p, "Done. Last tool result:")
	if _, err := os.Stat(env); err != nil {
		t.Fatalf("the allowed write did not happen: %v", err)
	}

	b.model.Script("SCN_POL_DENY", fakemodel.Tool("", "Bash", map[string]any{"command": "echo cleaning && rm -rf build", "description": "Clean"}))
	b.say(p, "SCN_POL_DENY")
	// The fake model's last step quotes the tool result it got.
	b.waitReply(p, "ccbridge policy: denied by rule Bash(rm -rf *)")
	for _, m := range b.botMessages(p.channel) {
		if strings.Contains(m.Content, "rm -rf build") && len(m.CustomIDs()) > 0 {
			t.Fatalf("a denied call got a card: %q", m.Content)
		}
	}

	es := b.waitAudit("the Discord Allow", func(e audit.Entry) bool {
		return e.From == audit.FromDiscord && e.Answer == "allow" && e.Who == b.owner.ID && strings.Contains(e.Asked, ".env.local")
	})
	var ask, deny bool
	for _, e := range es {
		ask = ask || (e.From == audit.FromPolicy && e.Answer == "ask" && e.Rule == "Write(.env*)")
		deny = deny || (e.From == audit.FromPolicy && e.Answer == "deny" && e.Rule == "Bash(rm -rf *)" && strings.Contains(e.Asked, "rm -rf build"))
	}
	if !ask || !deny {
		t.Errorf("policy decisions missing from the audit log (ask %v, deny %v): %+v", ask, deny, es)
	}
}

// A reply that quotes a (fake) GitHub token reaches Discord masked, while
// the terminal shows it whole.
func TestRedactionMasksRepliesNotTheTerminal(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	token := "ghp_" + strings.Repeat("Zq9Xw8Ve7U", 4)[:36]
	b.model.Script("SCN_SECRET", fakemodel.Text("Your token is "+token+" — keep it safe."))
	b.say(p, "SCN_SECRET")
	m := b.waitReply(p, "Your token is")
	if strings.Contains(m.Content, token) || !strings.Contains(m.Content, "[redacted GitHub token]") {
		t.Fatalf("reply not masked: %q", m.Content)
	}
	for _, c := range b.contents(p.channel) {
		if strings.Contains(c, token) {
			t.Fatalf("the token reached Discord: %q", c)
		}
	}
	s, _ := b.store.Sessions.Get(p.key)
	deadline := time.Now().Add(long)
	for {
		screen, _ := b.tmux.Capture(context.Background(), s.PaneID, 0)
		if strings.Contains(screen, token) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal does not show the token whole:\n%s", screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A prompt answered in the terminal is in the audit log, from the terminal.
func TestAuditRecordsATerminalAnswer(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_AUDIT_TERM", fakemodel.Tool("", "Bash", map[string]any{"command": "touch audited.txt && echo audit-ok", "description": "Touch"}))
	b.say(p, "SCN_AUDIT_TERM")
	card := b.waitCard(p, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch audited.txt") })
	b.pressOnDialog(p, card, "1", "Answered in the terminal")
	b.waitReply(p, "Done. Last tool result: audit-ok")
	b.waitAudit("the terminal answer", func(e audit.Entry) bool {
		return e.From == audit.FromTerminal && e.Answer == "allow" && strings.Contains(e.Asked, "touch audited.txt") && e.Who != ""
	})
}

// bypassMode restarts the bridge with every session in bypassPermissions,
// which Claude Code accepts from root only in a sandbox, after a one-time
// warning that the user settings can skip.
func bypassMode(t *testing.T, b *bridge) {
	t.Helper()
	cfg, err := os.ReadFile(b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(cfg), `HOME = "`)
	home, _, _ := strings.Cut(rest, `"`)
	if !ok || home == "" {
		t.Fatal("no HOME in the config")
	}
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"skipDangerousModePermissionPrompt": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b.reconfigure(func(c string) string {
		c = strings.Replace(c, `permission_mode = "default"`, `permission_mode = "bypassPermissions"`, 1)
		return strings.Replace(c, "env = { ", `env = { IS_SANDBOX = "1", `, 1)
	})
}

// In bypassPermissions, where Claude Code asks nothing, an ask rule still
// opens the dialog, and so a card; Deny from Discord refuses the call.
func TestPolicyAskInBypassPermissions(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, policyTOML)
	bypassMode(t, b)
	p := b.projects[0]
	b.model.Script("SCN_POL_PUSH", fakemodel.Tool("", "Bash", map[string]any{"command": "git push origin main", "description": "Publish"}))
	b.say(p, "SCN_POL_PUSH")
	card := b.waitCard(p, "the card of git push", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "git push origin main") })
	waitMode(t, b, p, "bypassPermissions")
	b.srv.Click(card.ID, action(t, card, "deny"), b.owner)
	b.waitCardText(card, "Denied** by")
	b.waitReply(p, "Done. Last tool result:")
	b.waitAudit("the Discord Deny", func(e audit.Entry) bool {
		return e.From == audit.FromDiscord && e.Answer == "deny" && e.Who == b.owner.ID && strings.Contains(e.Asked, "git push origin main")
	})
}

// A deny rule holds for a Claude started by hand in the project's
// directory, through the hooks install-hooks registered globally.
func TestPolicyHoldsForAHandStartedSession(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, policyTOML)
	p := b.projects[0]
	home := claudeHome(t, b.cfg)
	out, err := exec.Command(bins.bridge, "install-hooks", "--settings", filepath.Join(home, ".claude", "settings.json"), "--config", b.cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("install-hooks: %v\n%s", err, out)
	}
	b.model.Script("SCN_HAND_RM", fakemodel.Tool("", "Bash", map[string]any{"command": "rm -rf node_modules", "description": "Clean"}))
	os.MkdirAll(filepath.Join(p.dir, "node_modules"), 0o755)
	hand := claudetest.Start(t, claudetest.Options{Tmux: b.tmux, Session: "by-hand", Dir: p.dir, ModelURL: b.model.URL,
		Env: map[string]string{"HOME": home, state.EnvRuntimeDir: b.runtime}})
	if err := b.tmux.PasteTextIf(context.Background(), hand.Pane, tmux.Guard{}, "SCN_HAND_RM"); err != nil {
		t.Fatal(err)
	}
	b.tmux.SendKeys(context.Background(), hand.Pane, tmux.KeyEnter)
	b.waitReply(p, "ccbridge policy: denied by rule Bash(rm -rf *)")
	if _, err := os.Stat(filepath.Join(p.dir, "node_modules")); err != nil {
		t.Fatalf("the denied command ran: %v", err)
	}
}

// A file from outputs that holds a secret is held back with a notice; a
// clean one next to it is attached.
func TestRedactionHoldsBackAFileWithASecret(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	outputs, err := b.store.Dir.Outputs(p.key)
	if err != nil {
		t.Fatal(err)
	}
	key := "AKIA" + "Q3EXAMPLEKEY7XYZ"
	os.WriteFile(filepath.Join(outputs, "deploy.env"), []byte("AWS_ACCESS_KEY_ID="+key+"\n"), 0o600)
	os.WriteFile(filepath.Join(outputs, "notes.txt"), []byte("nothing secret"), 0o600)
	b.model.Script("SCN_SECRET_FILE", fakemodel.Text("Files: [DISCORD_ATTACH: deploy.env] [DISCORD_ATTACH: notes.txt]"))
	b.say(p, "SCN_SECRET_FILE")
	reply := b.waitReply(p, "Files:")
	if len(reply.Files) != 1 || reply.Files[0].Name != "notes.txt" {
		t.Fatalf("files = %+v", reply.Files)
	}
	if !strings.Contains(reply.Content, "`deploy.env` was held back: it contains a secret (AWS access key)") {
		t.Fatalf("no notice: %q", reply.Content)
	}
	for _, m := range b.botMessages(p.channel) {
		for _, f := range m.Files {
			if strings.Contains(string(f.Data), key) {
				t.Fatalf("the key reached Discord in %s", f.Name)
			}
		}
	}
}

// The model rewrites the policy record the hooks used to read, with no
// rules at all (review 2, finding 6): a session ccbridge started has its
// rules on its own command line, and the deny still holds.
func TestPolicyHoldsWhenTheModelRewritesTheRecord(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, policyTOML)
	p := b.projects[0]
	build := filepath.Join(p.dir, "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	pols, err := state.OpenPolicies(b.store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pols.Update(context.Background(), state.PoliciesKey, func(p *state.Policies) error { p.Scopes = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	b.model.Script("SCN_POL_REWRITTEN", fakemodel.Tool("", "Bash", map[string]any{"command": "rm -fr build", "description": "Clean"}))
	b.say(p, "SCN_POL_REWRITTEN")
	b.waitReply(p, "ccbridge policy: denied by rule Bash(rm -rf *)")
	if _, err := os.Stat(build); err != nil {
		t.Fatalf("the denied command ran: %v", err)
	}
}

// The model is denied a Read of the bot's record, which holds its token
// (review 2, finding 1): Claude Code itself refuses, from the deny rules
// of the session's inline settings.
func TestPolicyKeepsTheBotTokenFromTheModel(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	rec := b.botRecord(p)
	b.model.Script("SCN_READ_TOKEN", fakemodel.Tool("", "Read", map[string]any{"file_path": rec}))
	b.say(p, "SCN_READ_TOKEN")
	b.waitReply(p, "denied by your permission settings")
	for _, r := range b.model.Requests() {
		for _, tr := range r.ToolResults {
			if strings.Contains(tr.Content, p.bot.Token) {
				t.Fatalf("the model was given the token: %q", tr.Content)
			}
		}
	}
}

// A headless claude -p in a project's directory, with the daemon up and
// the hooks installed globally, is never held for a card (review 2,
// finding 11): it returns within seconds, and nothing of it is posted.
func TestHeadlessClaudeInAProjectReturnsAtOnce(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	home := claudeHome(t, b.cfg)
	out, err := exec.Command(bins.bridge, "install-hooks", "--settings", filepath.Join(home, ".claude", "settings.json"), "--config", b.cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("install-hooks: %v\n%s", err, out)
	}
	b.model.Script("SCN_HEADLESS", fakemodel.Tool("", "Bash", map[string]any{"command": "touch headless.txt", "description": "Touch"}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudetest.Binary(t), "-p", "SCN_HEADLESS")
	cmd.Dir = p.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), state.EnvRuntimeDir + "=" + b.runtime}
	for k, v := range claudetest.Env(home, b.model.URL) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	start := time.Now()
	out, err = cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil || !strings.Contains(string(out), "Done. Last tool result:") {
		t.Fatalf("claude -p: %v after %s\n%s", err, took, out)
	}
	// A card would hold it for prompt_timeout (30 min); Claude Code's own
	// refusal takes a few seconds, more under load.
	if took > 30*time.Second {
		t.Errorf("claude -p took %s", took)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "headless.txt")); err == nil {
		t.Error("the command ran without anyone allowing it")
	}
	time.Sleep(2 * time.Second) // the async hooks of its Stop
	for _, m := range b.botMessages(p.channel) {
		if strings.Contains(m.Content, "touch headless.txt") || strings.Contains(m.Content, "Done. Last tool result") {
			t.Errorf("the headless run reached the channel: %q", m.Content)
		}
	}
}

// Claude's Bash is kept from ccbridge's own files as Codex's shell is:
// Claude Code's deny rules stop only its Read and Edit tools, and the
// policy hook refuses any other call that names one.
func TestPolicyKeepsClaudesBashFromCcbridgesFiles(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	rec := b.botRecord(p)
	b.model.Script("SCN_BASH_OWN", fakemodel.Tool("", "Bash", map[string]any{"command": "cat " + rec}))
	b.say(p, "SCN_BASH_OWN")
	r := b.model.WaitRequest(t, long, "the refusal", func(r fakemodel.Request) bool {
		return slices.ContainsFunc(r.ToolResults, func(tr fakemodel.ToolResult) bool {
			return strings.Contains(tr.Content, "one of ccbridge's own files")
		})
	})
	for _, tr := range r.ToolResults {
		if strings.Contains(tr.Content, `"name"`) {
			t.Fatalf("the model was given the bot's record: %q", tr.Content)
		}
	}
}

// botRecord is the runtime directory's record of p's bot, which holds its
// token.
func (b *bridge) botRecord(p *project) string {
	b.t.Helper()
	rec := filepath.Join(b.runtime, "bots", p.bot.Name+".json")
	if _, err := os.Stat(rec); err != nil {
		b.t.Fatal(err)
	}
	return rec
}
