package router

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/weblink"
)

// fakeWeb makes links as the web view's adapter does, and logs revokes.
type fakeWeb struct {
	l       *log
	expires time.Time
}

func newFakeWeb(l *log) *fakeWeb {
	return &fakeWeb{l: l, expires: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}
}

const webBase = "https://ccb.example"

func (w *fakeWeb) SessionLink(key string) (string, time.Time) {
	return webBase + "/s/" + key + "/", w.expires
}
func (w *fakeWeb) DiffLink(key string) (string, time.Time) {
	return webBase + "/s/" + key + "/diff", w.expires
}
func (w *fakeWeb) IndexLink(server string) (string, time.Time) {
	return webBase + "/i/" + server + "/", w.expires
}
func (w *fakeWeb) Revoke(context.Context) error { w.l.add("revoke"); return nil }

// answers is a Responder that keeps every answer it gives.
type answers struct {
	fakeResponder
	got *[]chat.Reply
}

func (a answers) Respond(r chat.Reply) error {
	*a.got = append(*a.got, r)
	return a.fakeResponder.Respond(r)
}
func (a answers) Edit(r chat.Reply) (string, error) {
	*a.got = append(*a.got, r)
	return a.fakeResponder.Edit(r)
}

// links lists the link buttons of a reply.
func links(r chat.Reply) []string {
	var out []string
	for _, row := range r.Rows {
		for _, b := range row.Buttons {
			if b.Link() {
				out = append(out, b.URL)
			}
		}
	}
	return out
}

// noLinkIn fails when any op logged holds a link of the fake web view.
func noLinkIn(t *testing.T, l *log, what string) {
	t.Helper()
	for _, op := range l.all() {
		if strings.Contains(op, webBase) {
			t.Errorf("%s: %q carries a link", what, op)
		}
	}
}

// /web answers the owner alone (ephemeral) with a link to where it runs:
// the channel's session, the thread's, the panel channel's server index;
// it says until when the link works.
func TestWebAnswersWithTheLinkOfWhereItRuns(t *testing.T) {
	f := newOpenRouter(t, false)
	f.r.opt.Web = newFakeWeb(f.l)
	for _, c := range []struct {
		where, ch, parent, want string
	}{
		{"a project channel", channel, "", webBase + "/s/home-api/"},
		{"a thread", thread, channel, webBase + "/s/" + session.ThreadKey("home", "api", thread) + "/"},
		{"the panel channel", panelChannel, "", webBase + "/i/home/"},
	} {
		var got []chat.Reply
		f.r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: c.ch, ParentID: c.parent, User: chat.User{ID: owner}, Name: weblink.Name}, answers{fakeResponder{l: f.l}, &got})
		if len(got) != 1 || !got[0].Ephemeral {
			t.Fatalf("%s: answers %+v, want one ephemeral", c.where, got)
		}
		if l := links(got[0]); len(l) != 1 || l[0] != c.want {
			t.Errorf("%s: links %q, want %s", c.where, l, c.want)
		}
		if exp := strconv.FormatInt(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC).Unix(), 10); !strings.Contains(got[0].Content, "<t:"+exp) {
			t.Errorf("%s: the answer does not say when the link expires: %q", c.where, got[0].Content)
		}
	}
}

// Only the owners get a link, or revoke them; the web view off, /web says
// how to turn it on and links nothing.
func TestWebRefusesStrangersAndSaysHowToTurnItOn(t *testing.T) {
	f := newOpenRouter(t, false)
	f.r.opt.Web = newFakeWeb(f.l)
	for _, opts := range []map[string]string{nil, {"revoke": "all"}} {
		for _, ch := range []string{channel, panelChannel} {
			var got []chat.Reply
			f.r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: ch, User: chat.User{ID: "666"}, Name: weblink.Name, Options: opts}, answers{fakeResponder{l: f.l}, &got})
			if len(got) != 1 || got[0].Content != refusalForOthers || len(got[0].Rows) != 0 {
				t.Errorf("a stranger's /web %v in %s got %+v", opts, ch, got)
			}
		}
	}
	noLinkIn(t, f.l, "a stranger's /web")
	for _, op := range f.l.all() {
		if op == "revoke" {
			t.Error("a stranger revoked the links")
		}
	}

	g := newOpenRouter(t, false)
	var got []chat.Reply
	g.r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: weblink.Name}, answers{fakeResponder{l: g.l}, &got})
	if len(got) != 1 || !got[0].Ephemeral || len(got[0].Rows) != 0 || !strings.Contains(got[0].Content, "[web]") || !strings.Contains(got[0].Content, "listen") {
		t.Errorf("/web with the view off answered %+v", got)
	}
}

// /web revoke:all ends every link and says so, privately; it links
// nothing new.
func TestWebRevokeEndsEveryLink(t *testing.T) {
	f := newOpenRouter(t, false)
	f.r.opt.Web = newFakeWeb(f.l)
	var got []chat.Reply
	f.r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: weblink.Name, Options: map[string]string{"revoke": "all"}},
		answers{fakeResponder{l: f.l}, &got})
	revoked := 0
	for _, op := range f.l.all() {
		if op == "revoke" {
			revoked++
		}
	}
	if revoked != 1 {
		t.Fatalf("revoked %d times; ops %q", revoked, f.l.all())
	}
	last := got[len(got)-1]
	if !last.Ephemeral || len(last.Rows) != 0 || !strings.Contains(last.Content, "revoked") {
		t.Errorf("answer %+v", last)
	}
	noLinkIn(t, f.l, "/web revoke")
}

// /web is registered, with its revoke option, and /help lists it.
func TestWebIsACommand(t *testing.T) {
	c := command(weblink.Name)
	if c.Name != weblink.Name || len(c.Options) != 1 || c.Options[0].Name != "revoke" || c.Options[0].Required || len(c.Options[0].Choices) != 1 {
		t.Fatalf("/web = %+v", c)
	}
	if !strings.Contains(helpText(), "`/web`") {
		t.Error("/help lacks /web")
	}
}

// /diff carries an "Open in browser" link to the session's diff page
// when the web view is on and the channel is one only its readers see;
// in a channel every member of the server can read it links nothing and
// points at /web; with the view off, nothing.
func TestDiffLinksTheBrowserOnlyWhereOnlyOwnersRead(t *testing.T) {
	var r *Router
	var fl *fakeLander
	diff := func(web, public bool) (chat.Reply, *log, string) {
		var rp *fakeReplier
		var l *log
		r, _, rp, l, _ = newRouter(t)
		fl = &fakeLander{head: "c0ffee1234567"}
		r.opt.Land = fl
		key := threadWithTree(t, r)
		rp.public = public
		if web {
			r.opt.Web = newFakeWeb(l)
		}
		var shown chat.Reply
		r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "diff"}, drawn{fakeResponder{l: l}, &shown})
		return shown, l, key
	}
	shown, l, key := diff(true, false)
	if l := links(shown); len(l) != 1 || l[0] != webBase+"/s/"+key+"/diff" {
		t.Errorf("/diff with the web view on links %q", l)
	}
	// Merge this, beside the link, acts from the message as drawn: the
	// link is part of the face its binding checks.
	merge := buttonID(t, shown, "Merge this")
	var answer chat.Reply
	r.HandleComponent(l.on(thread, l.carrying(merge), merge), drawn{fakeResponder{l: l}, &answer})
	if len(fl.merged) != 1 || !strings.Contains(answer.Content, "Merged") {
		t.Errorf("Merge this beside the link: merged %+v, answered %q", fl.merged, answer.Content)
	}

	shown, l, _ = diff(true, true)
	if len(links(shown)) != 0 || !strings.Contains(shown.Content, "/web") {
		t.Errorf("/diff in a channel everyone reads: links %q, says %q", links(shown), shown.Content)
	}
	noLinkIn(t, l, "/diff in a public channel")
	buttonID(t, shown, "Merge this")

	shown, l, _ = diff(false, false)
	if len(links(shown)) != 0 || strings.Contains(shown.Content, "/web") {
		t.Errorf("/diff with the web view off: links %q, says %q", links(shown), shown.Content)
	}
	noLinkIn(t, l, "/diff with the web view off")
}

// The panel's 🌐 button answers the owner who clicked, privately, with
// the server's index; a stranger gets the refusal and no link.
func TestPanelWebButtonAnswersWithTheIndexLink(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	r.opt.Web = newFakeWeb(l)
	id, _ := chat.ID{Instance: "inst1", Kind: panel.IDKind, Args: []string{"web"}}.Encode()
	var got []chat.Reply
	r.HandleComponent(chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: id}, answers{fakeResponder{l: l}, &got})
	if len(got) != 1 || !got[0].Ephemeral || len(links(got[0])) != 1 || links(got[0])[0] != webBase+"/i/home/" {
		t.Fatalf("the panel's web button answered %+v", got)
	}
	got = nil
	r.HandleComponent(chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: "666"}, CustomID: id}, answers{fakeResponder{l: l}, &got})
	if len(got) != 1 || got[0].Content != refusalForOthers || len(got[0].Rows) != 0 {
		t.Errorf("a stranger got %+v", got)
	}
	r.opt.Web = nil
	got = nil
	r.HandleComponent(chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: id}, answers{fakeResponder{l: l}, &got})
	if len(got) != 1 || !got[0].Ephemeral || len(got[0].Rows) != 0 || !strings.Contains(got[0].Content, "[web]") {
		t.Errorf("with the view off it answered %+v", got)
	}
}

// A web view that could not start is not called off: /web and the panel's
// 🌐 say it could not start and why, privately, and link nothing.
func TestWebSaysWhyTheViewCouldNotStart(t *testing.T) {
	f := newOpenRouter(t, false)
	f.r.opt.Web = weblink.Down{Err: errors.New("listen tcp 127.0.0.1:7878: bind: address already in use")}
	for _, ch := range []string{channel, panelChannel} {
		var got []chat.Reply
		f.r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: ch, User: chat.User{ID: owner}, Name: weblink.Name}, answers{fakeResponder{l: f.l}, &got})
		if len(got) != 1 || !got[0].Ephemeral || len(got[0].Rows) != 0 || !strings.Contains(got[0].Content, "could not start") || !strings.Contains(got[0].Content, "address already in use") {
			t.Errorf("/web in %s with the view down answered %+v", ch, got)
		}
	}
}
