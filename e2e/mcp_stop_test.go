//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
)

// exited reports whether process pid has ended (gone, or a zombie its
// parent has not reaped yet).
func exited(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// Claude Code stops an MCP server with SIGINT, then SIGTERM, then SIGKILL
// half a second later, without closing its stdin. `ccbridge mcp` sent
// SIGTERM with a claude_say queued behind an open dialog exits at once and
// loses nothing: the next `ccbridge mcp` delivers the message once the
// dialog is answered (issue 18 item 4).
func TestMCPSIGTERMKeepsAQueuedMessage(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	e.model.Script("SCN_MCP_TERM", fakemodel.Tool("", "Bash", map[string]any{"command": "touch term.txt && echo term-ok", "description": "Touch"}))
	sid := e.start("SCN_MCP_TERM", nil)
	p := e.waitPending(sid, "tool_approval")
	panes, err := e.tmux.ListPanes(context.Background())
	if err != nil || len(panes) != 1 {
		t.Fatalf("panes: %v %v", panes, err)
	}
	waitScreen(t, e.tmux, panes[0].ID, "Do you want to proceed?")
	var out struct {
		Queued bool `json:"queued"`
	}
	e.must("claude_say", map[string]any{"sessionId": sid, "message": "spooled message SPOOLMSG"}, &out)
	if !out.Queued {
		t.Fatalf("claude_say into an open dialog was not queued: %+v", out)
	}

	pid := e.cmd.Process.Pid
	sent := time.Now()
	if err := e.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for !exited(pid) {
		if time.Since(sent) > 500*time.Millisecond {
			t.Fatal("ccbridge mcp still runs 500 ms after SIGTERM (Claude Code SIGKILLs it then)")
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("ccbridge mcp exited %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
	if spool, _ := filepath.Glob(filepath.Join(e.runtime, "mcp-queue", "*.json")); len(spool) != 1 {
		t.Fatalf("the queued message was not left for the next server: %v", spool)
	}

	// The next server takes the spool; the dialog answered, the message
	// goes in, once.
	e.connect(nil)
	if err := e.respond(sid, p.ID, "allow"); err != nil {
		t.Fatal(err)
	}
	e.waitIdle(sid, "ok: spooled message SPOOLMSG")
	// Typed while the allowed command still runs, Claude Code hands the
	// message to the model with the tool's result (MidTurn); after the
	// turn, as a prompt of its own. Either way the model sees it.
	n := 0
	for _, r := range e.model.Requests() {
		if strings.Contains(r.LastUserText, "SPOOLMSG") || strings.Contains(r.MidTurn, "SPOOLMSG") {
			n++
		}
	}
	if n == 0 {
		t.Error("the model never saw the message")
	}
	if spool, _ := filepath.Glob(filepath.Join(e.runtime, "mcp-queue", "*")); len(spool) != 0 {
		t.Errorf("spool left behind: %v", spool)
	}
}

// Requests piped in before the input ends are all answered, and the
// server names ccbridge's own version (issue 20 item 9).
func TestMCPAnswersEveryRequestBeforeEOF(t *testing.T) {
	t.Parallel()
	base := settledTempDir(t)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CCBRIDGE_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+filepath.Join(base, "home"), "CCBRIDGE_RUNTIME_DIR="+filepath.Join(base, "rt"), "XDG_STATE_HOME="+filepath.Join(base, "state"))
	cmd := exec.Command(bins.bridge, "mcp")
	cmd.Env = env
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("ccbridge mcp: %v\n%s", err, stdout)
	}
	version, err := exec.Command(bins.bridge, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	answered := map[float64]json.RawMessage{}
	sc := bufio.NewScanner(strings.NewReader(string(stdout)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Result != nil {
			answered[m.ID] = m.Result
		}
	}
	if len(answered) != 2 {
		t.Fatalf("answered %d of 2 requests:\n%s", len(answered), stdout)
	}
	var init struct {
		ServerInfo struct{ Version string } `json:"serverInfo"`
	}
	_ = json.Unmarshal(answered[1], &init)
	if init.ServerInfo.Version == "" || !strings.Contains(string(version), init.ServerInfo.Version) {
		t.Errorf("serverInfo.version = %q, ccbridge version says %q", init.ServerInfo.Version, version)
	}
	if !strings.Contains(string(answered[2]), `"claude_status"`) {
		t.Errorf("tools/list: %s", answered[2])
	}
}
