package router

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/history"
)

// codexRecords is pastTakeovers that holds one Codex conversation, as the
// core reads it for a Codex project, and records whose records were read.
type codexRecords struct {
	*fakeTakeovers
	asked []string // server/project
}

const codexConv = "01a222e3-a253-77e3-89c2-c2978228edc7"

func (c *codexRecords) History(server, project, _ string, _ int) ([]history.Conversation, error) {
	c.asked = append(c.asked, server+"/"+project)
	return []history.Conversation{{ID: codexConv, FirstPrompt: "fix the lexer", Turns: 3, AgentName: history.AgentCodex}}, nil
}

func (c *codexRecords) Conversation(server, project, _, id string) (history.Conversation, bool) {
	c.asked = append(c.asked, server+"/"+project)
	return history.Conversation{ID: codexConv, FirstPrompt: "fix the lexer", Turns: 3, AgentName: history.AgentCodex}, id == codexConv
}

// A Codex project's /sessions lists the conversations the core reads for
// that project (Codex's of its folder), says Codex, and offers Resume and
// Resume here, but no Fork: ccbridge cannot start Codex on a copy, and a
// forged Fork is refused rather than resuming the conversation itself.
// Resume starts a thread on the conversation.
func TestCodexProjectListsAndResumesCodexConversations(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	cfg := *r.conf()
	cfg.Servers = slices.Clone(cfg.Servers)
	cfg.Servers[0].Projects = slices.Clone(cfg.Servers[0].Projects)
	cfg.Servers[0].Projects[0].Agent = config.AgentCodex
	r.Reconfigure(&cfg)
	r.opt.AgentTitle = func(p config.Project) string {
		if p.AgentName() == config.AgentCodex {
			return "Codex"
		}
		return "Claude"
	}
	tk := &codexRecords{fakeTakeovers: &fakeTakeovers{fakeSessions: ss}}
	r.opt.Sessions = tk
	reply := r.listSessions(target{key: "home-api", rt: r.routeTable()[channel]})
	if !strings.HasPrefix(reply.Content, "**Running Codex sessions in `") || !strings.Contains(reply.Content, "“fix the lexer” — 3 turn(s)") {
		t.Fatalf("listing %q", reply.Content)
	}
	if len(tk.asked) != 1 || tk.asked[0] != "home/api" {
		t.Fatalf("records read: %q", tk.asked)
	}
	ids := map[string]string{}
	for _, row := range reply.Rows {
		for _, b := range row.Buttons {
			d, err := chat.DecodeID(b.CustomID)
			if err != nil {
				t.Fatal(err)
			}
			ids[d.Args[0]] = b.CustomID
		}
	}
	if ids["resume"] == "" || ids["here"] == "" || ids["fork"] != "" {
		t.Fatalf("buttons %+v", reply.Rows)
	}
	click := func(id string) {
		r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: id}), fakeResponder{l: l})
	}
	forged := strings.Replace(ids["resume"], "|resume|", "|fork|", 1)
	click(forged)
	if !slices.ContainsFunc(l.all(), func(s string) bool { return strings.Contains(s, "Codex's conversations cannot be forked") }) ||
		slices.ContainsFunc(l.all(), func(s string) bool { return strings.HasPrefix(s, "thread ") }) {
		t.Fatalf("a forged Fork: %q", l.all())
	}
	click(ids["resume"])
	if !slices.ContainsFunc(l.all(), func(s string) bool { return strings.HasPrefix(s, "thread fix the lexer") }) {
		t.Fatalf("not resumed: %q", l.all())
	}
	if tk.asked[len(tk.asked)-1] != "home/api" {
		t.Errorf("resumed from the records of %q", tk.asked)
	}
}
