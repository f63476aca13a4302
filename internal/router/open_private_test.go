package router

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/session"
)

func (f *fakeReplier) StartPrivateThread(_ context.Context, server, ch, name string, members []string) (string, []string, error) {
	f.l.add("private-thread %s members=%v", name, members)
	if f.privateErr != nil {
		return "", nil, f.privateErr
	}
	return openedID, nil, nil
}

func (f *fakeReplier) EveryoneCanView(_ context.Context, server, ch string) (bool, error) {
	return f.public, nil
}

// /open starts a private thread with the owner in it, wherever it runs;
// in a channel every member can read (the control-panel channel, often
// #general) where Discord refuses a private thread, it is refused, saying
// why; in a private channel it falls back to a public thread, which only
// the channel's readers see (security-3 #3).
func TestOpenInAPublicPanelChannelIsPrivateOrRefused(t *testing.T) {
	f := newOpenRouter(t, true)
	f.rp.public = true
	f.command(panelChannel, "", openName, map[string]string{"path": "api"})
	f.l.waitFor(t, "ensure "+session.ThreadKey("home", session.OpenedProject, openedID))
	if got := f.l.all(); got[1] != "private-thread api members=["+owner+"]" {
		t.Fatalf("ops = %q", got)
	}
	if _, err := f.reg.Opened.Get(openedID); err != nil {
		t.Fatal(err)
	}

	g := newOpenRouter(t, true)
	g.rp.public, g.rp.privateErr = true, errors.New("HTTP 403 Forbidden, {\"message\": \"Missing Permissions\", \"code\": 50013}")
	g.command(panelChannel, "", openName, map[string]string{"path": "api"})
	got := g.lastEdit(t)
	if !strings.Contains(got, "⚠️ Not opened: every member of this server can read this channel") || !strings.Contains(got, "Create Private Threads") {
		t.Errorf("answer: %s", got)
	}
	for _, op := range g.l.all() {
		if strings.HasPrefix(op, "thread ") || strings.HasPrefix(op, "ensure ") {
			t.Errorf("a refused /open did %q", op)
		}
	}
	if all, _ := g.reg.Opened.List(); len(all) != 0 {
		t.Errorf("remembered %+v", all)
	}

	tg := newOpenRouter(t, true)
	tg.rp.public, tg.rp.privateErr = true, fmt.Errorf("start private topic: %w", chat.ErrNoPrivateThreads)
	tg.command(panelChannel, "", openName, map[string]string{"path": "api"})
	if got := tg.lastEdit(t); !strings.Contains(got, "⚠️ Not opened: there are no private topics here") || strings.Contains(got, "Discord") || strings.Contains(got, "Create Private Threads") {
		t.Errorf("a platform without private threads answered: %s", got)
	}
	for _, op := range tg.l.all() {
		if strings.HasPrefix(op, "thread ") || strings.HasPrefix(op, "ensure ") {
			t.Errorf("a refused /open did %q", op)
		}
	}

	h := newOpenRouter(t, true)
	h.rp.privateErr = fmt.Errorf("no private threads here")
	h.command(channel, "", openName, map[string]string{"path": "api"})
	h.l.waitFor(t, "ensure "+session.ThreadKey("home", session.OpenedProject, openedID))
	h.l.waitFor(t, "thread api")
}
