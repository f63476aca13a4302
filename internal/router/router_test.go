package router

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

const (
	owner   = "100000000000000002"
	channel = "100000000000000003"
)

// log is a shared, ordered record of every side effect, and of every
// message Discord would refuse (newRouter fails the test on one).
type log struct {
	mu      sync.Mutex
	ops     []string
	refused []string
	// The fake Discord's messages: what each message ccbridge posted or
	// drew shows, by id.
	msgs     map[string]kept
	seq      int
	carriers map[string]string // the message each custom_id was last drawn on
	apart    map[string]bool   // messages whose interaction was answered with a Defer
}

// kept is a message as Discord keeps it.
type kept struct {
	m     chat.Message
	files []string
}

// draw records what a message shows now; a new one (id "") gets an id.
func (l *log) draw(id string, m chat.Message, files []string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.msgs == nil {
		l.msgs = map[string]kept{}
	}
	if id == "" {
		l.seq++
		id = fmt.Sprintf("2%017d", l.seq)
	}
	l.msgs[id] = kept{m: m, files: files}
	if l.carriers == nil {
		l.carriers = map[string]string{}
	}
	for _, row := range m.Rows {
		for _, b := range row.Buttons {
			l.carriers[b.CustomID] = id
		}
		if row.Select != nil {
			l.carriers[row.Select.CustomID] = id
		}
	}
	return id
}

// setAnswer records whether the answer to an interaction on message at is
// a message of its own.
func (l *log) setAnswer(at string, apart bool) {
	if at == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.apart == nil {
		l.apart = map[string]bool{}
	}
	l.apart[at] = apart
}

func (l *log) answersApart(at string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.apart[at]
}

// carriedOver is a new log holding the messages l's fake Discord holds,
// and no operations: what a restarted daemon finds.
func (l *log) carriedOver() *log {
	l.mu.Lock()
	defer l.mu.Unlock()
	return &log{msgs: maps.Clone(l.msgs), carriers: maps.Clone(l.carriers), seq: l.seq}
}

// carrying is the message a custom_id was last drawn on ("" if none).
func (l *log) carrying(customID string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.carriers[customID]
}

// message is what message id shows.
func (l *log) message(t *testing.T, id string) chat.Message {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.msgs[id]
	if !ok {
		t.Fatalf("no message %s was drawn", id)
	}
	return s.m
}

// last is the id of the message drawn last.
func (l *log) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("2%017d", l.seq)
}

// on is a click in channel ch on message id as Discord gives it: its
// text, components and attachments' ids, on the button or menu whose
// custom_id is customID.
func (l *log) on(ch, id, customID string, values ...string) chat.ComponentEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.msgs[id]
	return chat.ComponentEvent{Server: "home", ChannelID: ch, MessageID: id, Content: s.m.Content, Rows: s.m.Rows, FileIDs: s.files,
		User: chat.User{ID: owner}, CustomID: customID, Values: values}
}

// submitted is the submit of a form opened from message id.
func (l *log) submitted(ch, id, customID string, values map[string]string) chat.ModalEvent {
	ev := l.on(ch, id, customID)
	return chat.ModalEvent{Server: ev.Server, ChannelID: ev.ChannelID, MessageID: id, Content: ev.Content, Rows: ev.Rows, FileIDs: ev.FileIDs,
		User: ev.User, CustomID: customID, Values: values}
}

// press clicks, as the owner, the button labelled label of message id in
// channel ch, and answers through a responder on that message.
func (l *log) press(t *testing.T, r *Router, ch, id, label string) {
	t.Helper()
	r.HandleComponent(l.on(ch, id, buttonOf(t, l.message(t, id), label)), fakeResponder{l: l, at: id})
}

// onDrawn gives a click without a message one: a message ccbridge drew
// (bound as the router binds what it draws) in the click's channel,
// showing the click's text and, as a button, its control. Tests of what a
// handler does use it; the guard's own tests click real drawings
// (components_test.go).
func (l *log) onDrawn(r *Router, ev chat.ComponentEvent) chat.ComponentEvent {
	if ev.MessageID != "" {
		return ev
	}
	m := chat.Message{Content: ev.Content, Rows: []chat.Row{{Buttons: []chat.Button{{Label: "b", CustomID: ev.CustomID, Style: chat.Secondary}}}}}
	ev.MessageID, ev.Rows = l.draw("", m, nil), m.Rows
	r.bind(ev.Server, ev.ChannelID, ev.MessageID, m, nil)
	return ev
}

// submitDrawn is onDrawn for a form's submit: the form was opened from a
// message ccbridge drew.
func (l *log) submitDrawn(r *Router, ev chat.ModalEvent) chat.ModalEvent {
	if ev.MessageID != "" {
		return ev
	}
	c := l.onDrawn(r, chat.ComponentEvent{Server: ev.Server, ChannelID: ev.ChannelID, Content: ev.Content, CustomID: ev.CustomID})
	ev.MessageID, ev.Rows = c.MessageID, c.Rows
	return ev
}

// buttonOf finds a button by its label.
func buttonOf(t *testing.T, m chat.Message, label string) string {
	t.Helper()
	for _, row := range m.Rows {
		for _, b := range row.Buttons {
			if b.Label == label {
				return b.CustomID
			}
		}
	}
	t.Fatalf("no button %q on %q", label, m.Content)
	return ""
}

// check records a message that breaks one of Discord's rules.
func (l *log) check(m chat.Message) { l.refuse(chat.CheckMessage(m), m.Content) }

func (l *log) refuse(err error, what string) {
	if err != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.refused = append(l.refused, fmt.Sprintf("%v: %.200q", err, what))
	}
}

func (l *log) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, fmt.Sprintf(format, args...))
}

func (l *log) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ops)
}

func (l *log) waitFor(t *testing.T, op string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if slices.Contains(l.all(), op) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("never saw %q; saw %q", op, l.all())
}

// waitReact waits for a reaction emoji on any message (posted messages
// get fresh ids).
func (l *log) waitReact(t *testing.T, emoji string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if slices.ContainsFunc(l.all(), func(op string) bool { return strings.HasPrefix(op, "react ") && strings.HasSuffix(op, " "+emoji) }) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("never saw a %s reaction; saw %q", emoji, l.all())
}

type fakeSessions struct {
	mu        sync.Mutex
	state     string            // what Status reports; "busy" when empty
	releases  []session.Release // what ReleaseWorktree returns, in turn (then empty)
	queued    int               // Screen shows Claude Code's queue this many times
	l         *log
	dialogs   int  // Deliver answers ErrDialogOpen this many times
	receipts  int  // WaitReceipt succeeds from this call on (1 = first)
	hold      bool // WaitReceipt waits for its context to end (then fails)
	calls     int
	noPane    bool
	delivered []string
	screens   []string         // what Screen shows, in turn; the last one stays
	fail      map[string]error // what a method fails with, by name
	statuses  int              // calls of Status
	reads     int              // calls of Screen
	targets   []session.Target // what Ensure was given, in turn
}

// waitStatus waits for a call of Status (a closer looking at the turn).
func (f *fakeSessions) waitStatus(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		f.mu.Lock()
		n := f.statuses
		f.mu.Unlock()
		if n > 0 {
			return
		}
	}
	t.Fatal("Status was never asked")
}

func (f *fakeSessions) Ensure(_ context.Context, t session.Target) (string, bool, error) {
	if err := f.fail["Ensure"]; err != nil {
		return "", false, err
	}
	f.mu.Lock()
	f.targets = append(f.targets, t)
	f.mu.Unlock()
	f.l.add("ensure %s", t.Key)
	return "%1", true, nil
}
func (f *fakeSessions) Deliver(_ context.Context, key, text string) (time.Time, error) {
	if f.dialogs > 0 {
		f.dialogs--
		f.l.add("dialog")
		return time.Time{}, session.ErrDialogOpen
	}
	if f.noPane {
		return time.Time{}, session.ErrNoPane
	}
	f.l.add("deliver %s %q", key, text)
	f.delivered = append(f.delivered, text)
	return time.Now(), nil
}
func (f *fakeSessions) WaitReceipt(ctx context.Context, _ string, _ time.Time, _ string, _ time.Duration) error {
	if f.hold {
		<-ctx.Done()
		return session.ErrNoReceipt
	}
	f.calls++
	if f.receipts > 0 && f.calls >= f.receipts {
		return nil
	}
	return session.ErrNoReceipt
}
func (f *fakeSessions) PressEnter(context.Context, string) error { f.l.add("enter"); return nil }
func (f *fakeSessions) InterruptTurn(_ context.Context, key string) error {
	if err := f.fail["InterruptTurn"]; err != nil {
		return err
	}
	if f.noPane {
		return session.ErrNoPane
	}
	f.l.add("interrupt %s", key)
	return nil
}

// ScreenDialog reads the fake's screens as Claude's.
func (f *fakeSessions) ScreenDialog(_, screen string) (string, error) {
	return session.DialogText(screen), nil
}
func (f *fakeSessions) Screen(context.Context, string, int) (string, error) {
	if err := f.fail["Screen"]; err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.queued > 0 {
		f.queued--
		f.l.add("queued")
		return "❯ earlier\n  ⎿  Queued · ctrl+x ctrl+s to send now\n❯ Press up to edit queued messages", nil
	}
	if len(f.screens) > 0 {
		s := f.screens[0]
		if len(f.screens) > 1 {
			f.screens = f.screens[1:]
		}
		return s, nil
	}
	return "❯ screen text", nil
}
func (f *fakeSessions) PressKeys(_ context.Context, key string, names ...string) error {
	f.l.add("keys %s %s", key, strings.Join(names, " "))
	return nil
}
func (f *fakeSessions) SetMode(_ context.Context, key, mode string) error {
	if err := f.fail["SetMode"]; err != nil {
		return err
	}
	f.l.add("mode %s", mode)
	return nil
}
func (f *fakeSessions) SetModel(_ context.Context, key, model string) error {
	f.l.add("model %s", model)
	return nil
}
func (f *fakeSessions) Stop(_ context.Context, key string) error {
	if err := f.fail["Stop"]; err != nil {
		return err
	}
	f.l.add("stop %s", key)
	return nil
}
func (f *fakeSessions) ReleaseWorktree(_ context.Context, key string, force bool) (session.Release, error) {
	f.l.add("release %s force=%v", key, force)
	if err := f.fail["ReleaseWorktree"]; err != nil {
		return session.Release{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.releases) == 0 {
		return session.Release{}, nil
	}
	rel := f.releases[0]
	f.releases = f.releases[1:]
	return rel, nil
}
func (f *fakeSessions) setState(s string) {
	f.mu.Lock()
	f.state = s
	f.mu.Unlock()
}
func (f *fakeSessions) Status(context.Context, string) (session.Status, error) {
	if err := f.fail["Status"]; err != nil {
		return session.Status{}, err
	}
	f.mu.Lock()
	st := f.state
	f.statuses++
	f.mu.Unlock()
	if st == "" {
		st = "busy"
	}
	return session.Status{State: st, Session: state.Session{Cwd: "/src/api", PaneID: "%1", ModeSeen: "plan"}}, nil
}

type fakeReplier struct {
	l           *log
	files       map[string][]byte
	postErr     error  // what Post fails with
	downloadErr error  // what a download of a file it lacks fails with
	onDownload  func() // runs during every download
	privateErr  error  // what StartPrivateThread fails with (open_private_test.go)
	public      bool   // every member may view every channel
}

// Send and React, like Discord's client, do nothing on an ended context.
// Send, like the daemon's, posts a long text in as many messages as it
// takes.
func (f *fakeReplier) Send(ctx context.Context, server, ch, text string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for r := []rune(text); len(r) > 0; {
		n := min(len(r), chat.Limit)
		f.l.check(chat.Message{Content: string(r[:n])})
		r = r[n:]
	}
	f.l.add("send %s", text)
	return nil
}
func (f *fakeReplier) StartThread(_ context.Context, server, ch, name string) (string, error) {
	f.l.add("thread %s", name)
	return "100000000000000077", nil
}
func (f *fakeReplier) Post(_ context.Context, server, ch string, m chat.Message) (string, error) {
	f.l.check(m)
	f.l.add("post %s %s", ch, m.Content)
	if f.postErr != nil {
		return "", f.postErr
	}
	return f.l.draw("", m, nil), nil
}

// PostCard is Post; each file gets an attachment id.
func (f *fakeReplier) PostCard(ctx context.Context, server, ch string, m chat.Message) (string, []string, error) {
	id, err := f.Post(ctx, server, ch, m)
	if err != nil {
		return "", nil, err
	}
	var files []string
	for i := range m.Files {
		files = append(files, fmt.Sprintf("%s%d", id, i))
	}
	f.l.draw(id, m, files)
	return id, files, nil
}
func (f *fakeReplier) React(ctx context.Context, server, ch, msg, emoji string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.l.add("react %s %s", msg, emoji)
	return nil
}
func (f *fakeReplier) ArchiveThread(_ context.Context, server, thread string) error {
	f.l.add("archive %s", thread)
	return nil
}
func (f *fakeReplier) Download(_ context.Context, url string, limit int64) ([]byte, error) {
	if f.onDownload != nil {
		f.onDownload()
	}
	b, ok := f.files[url]
	if !ok && f.downloadErr != nil {
		return nil, f.downloadErr
	}
	if !ok {
		return nil, errors.New("HTTP 404")
	}
	return b, nil
}

// fakeResponder answers an interaction on message at (none: a command's,
// whose answer is a new message).
type fakeResponder struct {
	l  *log
	at string
}

func (f fakeResponder) Respond(r chat.Reply) error {
	f.l.check(r)
	f.l.add("respond ephemeral=%v %s", r.Ephemeral, r.Content)
	return nil
}

// Defer on a message's component makes the answer a new message (Edit
// draws it); DeferUpdate makes it the message itself.
func (f fakeResponder) Defer(bool) error {
	f.l.add("defer")
	f.l.setAnswer(f.at, true)
	return nil
}
func (f fakeResponder) DeferUpdate() error {
	f.l.add("defer-update")
	f.l.setAnswer(f.at, false)
	return nil
}
func (f fakeResponder) Update(m chat.Message) (string, error) {
	f.l.check(m)
	f.l.add("update %s rows=%d", m.Content, len(m.Rows))
	if f.at == "" {
		return "", nil
	}
	return f.l.draw(f.at, m, nil), nil
}
func (f fakeResponder) OpenModal(m chat.Modal) error {
	f.l.refuse(chat.CheckModal(m), m.Title)
	f.l.add("modal %s", m.CustomID)
	return nil
}
func (f fakeResponder) Edit(r chat.Reply) (string, error) {
	f.l.check(r)
	f.l.add("edit %s buttons=%d", r.Content, len(r.Rows))
	at := f.at
	if f.l.answersApart(at) {
		at = ""
	}
	return f.l.draw(at, r, nil), nil
}

// guardWait is how long the guard waits for a binding in these tests:
// enough for a binding on its way within the process, short for refusals.
const guardWait = 300 * time.Millisecond

func newRouter(t *testing.T) (*Router, *fakeSessions, *fakeReplier, *log, *state.Store) {
	t.Helper()
	return newRouterNamed(t, "home", "api")
}

// newRouterNamed is newRouter with the first server and its project named.
func newRouterNamed(t *testing.T, server, project string) (*Router, *fakeSessions, *fakeReplier, *log, *state.Store) {
	t.Helper()
	return newRouterFrom(t, fmt.Sprintf(`
[claude]
prompt_timeout = "1s"
[[servers]]
name = %q
token_env = "X"
guild_id = "100000000000000001"
owner_ids = [%q]
  [[servers.projects]]
  name = %q
  channel_id = %q
  path = %q
[[servers]]
name = "work"
token_env = "Y"
guild_id = "100000000000000009"
owner_ids = ["100000000000000008"]
`, server, owner, project, channel, t.TempDir()))
}

// newRouterFrom is a router with fakes around it on the config text.
func newRouterFrom(t *testing.T, text string) (*Router, *fakeSessions, *fakeReplier, *log, *state.Store) {
	t.Helper()
	cfg, err := config.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := state.OpenRegistry(filepath.Join(t.TempDir(), "durable"))
	if err != nil {
		t.Fatal(err)
	}
	l := &log{}
	ss := &fakeSessions{l: l, receipts: 1}
	rp := &fakeReplier{l: l, files: map[string][]byte{}}
	ctx, cancel := context.WithCancel(context.Background())
	r := New(ctx, Options{Config: cfg, Sessions: ss, Replier: rp, Store: store, Registry: reg, Instance: "inst1"})
	r.guard.Wait = guardWait
	t.Cleanup(func() {
		cancel()
		r.Wait()
		for _, m := range l.refused {
			t.Errorf("Discord would refuse: %s", m)
		}
	})
	return r, ss, rp, l, store
}

func msg(text string) chat.MessageEvent {
	return chat.MessageEvent{Server: "home", ChannelID: channel, MessageID: "m1", Author: chat.User{ID: owner}, Content: text}
}

func TestOwnerMessageIsDeliveredAndConfirmed(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	r.HandleMessage(msg("hello"))
	l.waitFor(t, "react m1 ✅")
	if got := l.all(); !slices.Equal(got, []string{"ensure home-api", `deliver home-api "hello"`, "react m1 ✅"}) {
		t.Fatalf("ops = %q", got)
	}
}

func TestOthersHaveNoEffect(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	for _, ev := range []chat.MessageEvent{
		{Server: "home", ChannelID: channel, MessageID: "x", Author: chat.User{ID: "666"}, Content: "rm -rf"},
		{Server: "home", ChannelID: channel, MessageID: "x", Author: chat.User{ID: owner, Bot: true}, Content: "bot"},
		{Server: "home", ChannelID: "999", MessageID: "x", Author: chat.User{ID: owner}, Content: "other channel"},
		{Server: "work", ChannelID: channel, MessageID: "x", Author: chat.User{ID: owner}, Content: "wrong bot"},
	} {
		r.HandleMessage(ev)
	}
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: "666"}, Name: "stop"}, fakeResponder{l: l})
	id, _ := chat.ID{Instance: "inst1", Kind: "key", Args: []string{"home-api", "1"}}.Encode()
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: "666"}, CustomID: id}), fakeResponder{l: l})
	time.Sleep(50 * time.Millisecond)
	want := []string{"respond ephemeral=true " + refusalForOthers, "respond ephemeral=true " + refusalForOthers}
	if got := l.all(); !slices.Equal(got, want) {
		t.Fatalf("ops = %q", got)
	}
}

func TestDialogDelaysDeliveryAndSaysSo(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	ss.dialogs = 1
	r.HandleMessage(msg("after the dialog"))
	l.waitFor(t, "react m1 ✅")
	got := l.all()
	if !slices.Contains(got, "react m1 ⏳") || !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "send ⏳ Claude is waiting on a prompt") }) {
		t.Fatalf("ops = %q", got)
	}
}

func TestNoReceiptPressesEnterThenWarns(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	ss.receipts = 2
	r.HandleMessage(msg("first"))
	l.waitFor(t, "react m1 ✅")
	if !slices.Contains(l.all(), "enter") {
		t.Fatal("Enter was not pressed again")
	}
	r2, ss2, _, l2, _ := newRouter(t)
	ss2.receipts = 0
	r2.HandleMessage(msg("never"))
	l2.waitFor(t, "react m1 ⚠️")
}

func TestAttachmentsAreSavedSafely(t *testing.T) {
	r, ss, rp, l, store := newRouter(t)
	rp.files["http://x/a"] = []byte("PNGDATA")
	ev := msg("look")
	ev.Attachments = []chat.Attachment{{Name: "../../evil name.png", URL: "http://x/a", Size: 7}, {Name: "big.bin", URL: "http://x/b", Size: 30 << 20}, {Name: "gone.txt", URL: "http://x/404", Size: 1}}
	r.HandleMessage(ev)
	l.waitFor(t, "react m1 ✅")
	dir, _ := store.Dir.Uploads("home-api")
	want := filepath.Join(dir, "m1-evil_name.png")
	if b, err := os.ReadFile(want); err != nil || string(b) != "PNGDATA" {
		t.Fatalf("saved file: %q, %v", b, err)
	}
	if !strings.Contains(ss.delivered[0], "look\n\nAttached files:\n- "+want) {
		t.Errorf("prompt = %q", ss.delivered[0])
	}
	var notice string
	for _, op := range l.all() {
		if strings.HasPrefix(op, "send ⚠️ Some attachments") {
			notice = op
		}
	}
	if !strings.Contains(notice, "big.bin is 30.0 MiB") || !strings.Contains(notice, "gone.txt: HTTP 404") {
		t.Errorf("notice = %q", notice)
	}
}

func TestCommandsAckFirst(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	owner := chat.User{ID: owner}
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: owner, Name: "stop"}, fakeResponder{l: l})
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: owner, Name: "mode", Options: map[string]string{"mode": "plan"}}, fakeResponder{l: l})
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: owner, Name: "screen"}, fakeResponder{l: l})
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: owner, Name: "status"}, fakeResponder{l: l})
	got := l.all()
	want := []string{"defer", "interrupt home-api", "edit ⏹ Interrupted Claude. Send a message to continue. buttons=0",
		"defer", "mode plan", "edit Permission mode: plan buttons=0", "defer", "edit ```\n❯ screen text\n``` buttons=3"}
	if !slices.Equal(got[:len(want)], want) {
		t.Fatalf("ops = %q", got)
	}
	if !strings.Contains(got[len(got)-1], "busy") || !strings.Contains(got[len(got)-1], "Mode: plan") {
		t.Errorf("status = %q", got[len(got)-1])
	}
}

func TestKeyButtons(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	id := keyID(t, "home-api", "Escape", time.Now())
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: id}), fakeResponder{l: l})
	if got := l.all(); len(got) != 3 || got[0] != "defer-update" || got[1] != "keys home-api Escape" {
		t.Fatalf("ops = %q", got)
	}
	other, _ := chat.ID{Instance: "other", Kind: "key", Args: []string{"home-api", "1"}}.Encode()
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: other}), fakeResponder{l: l})
	if n := len(l.all()); n != 3 {
		t.Fatalf("another instance's button had an effect: %q", l.all())
	}
}

// Claude may redraw only after the screen was first read: the message
// follows the pane and shows what the key did.
func TestScreenFollowsTheRedrawAfterAKey(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	ss.screens = []string{"⏸ manual mode on", "⏸ manual mode on", "⏵⏵ accept edits on"}
	id := keyID(t, "home-api", "BTab", time.Now())
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: id}), fakeResponder{l: l})
	deadline := time.Now().Add(5 * time.Second)
	for !slices.ContainsFunc(l.all(), func(op string) bool { return strings.Contains(op, "accept edits on") }) {
		if time.Now().After(deadline) {
			t.Fatalf("the screen message never showed the redraw: %q", l.all())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Quick key presses on one screen leave one follower of the pane: its reads
// and edits are those of one, not one per press.
func TestQuickKeysLeaveOneScreenFollower(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	for i := range 200 {
		ss.screens = append(ss.screens, fmt.Sprintf("frame %d", i)) // a pane that keeps changing
	}
	for range 4 {
		id := keyID(t, "home-api", "Down", time.Now())
		r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: id}), fakeResponder{l: l})
	}
	for deadline := time.Now().Add(5 * time.Second); len(slices.DeleteFunc(l.all(), func(op string) bool { return op != "keys home-api Down" })) < 4; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("keys not pressed: %q", l.all())
		}
	}
	ss.mu.Lock()
	ss.reads = 0
	ss.mu.Unlock()
	ops := len(l.all())
	time.Sleep(2 * time.Second)
	ss.mu.Lock()
	reads := ss.reads
	ss.mu.Unlock()
	edits := 0
	for _, op := range l.all()[ops:] {
		if strings.HasPrefix(op, "edit ") {
			edits++
		}
	}
	// One follower reads every 300 ms and edits at most every 1.5 s.
	if reads > 8 || edits > 2 {
		t.Fatalf("in 2 s: %d screen reads, %d edits; want those of one follower", reads, edits)
	}
}

func TestSafeFileName(t *testing.T) {
	for in, want := range map[string]string{"a.png": "a.png", "../../etc/passwd": "passwd", ".bashrc": "bashrc", "sp ace$.txt": "sp_ace_.txt", "": "file", "..": "file"} {
		if got := safeFileName(in); got != want {
			t.Errorf("safeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestThreadMessagesGetTheirOwnSession(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	ev := msg("in a thread")
	ev.ChannelID, ev.ParentID = "100000000000000050", channel
	r.HandleMessage(ev)
	l.waitFor(t, "react m1 ✅")
	if got := l.all(); got[0] != "ensure home-api-t100000000000000050" || got[1] != `deliver home-api-t100000000000000050 "in a thread"` {
		t.Fatalf("ops = %q", got)
	}
	ss.setState("idle")
	r.HandleThreadArchived("home", "100000000000000050", channel)
	l.waitFor(t, "stop home-api-t100000000000000050")
	other := msg("thread of another channel")
	other.ChannelID, other.ParentID = "100000000000000051", "999"
	r.HandleMessage(other)
	time.Sleep(50 * time.Millisecond)
	if slices.ContainsFunc(l.all(), func(op string) bool { return strings.Contains(op, "100000000000000051") }) {
		t.Fatal("a thread outside every project was handled")
	}
}

func TestThreadCommandStartsAThreadWithItsPrompt(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "thread",
		Options: map[string]string{"name": "refactor", "prompt": "start with the parser"}}, fakeResponder{l: l})
	l.waitFor(t, `deliver home-api-t100000000000000077 "start with the parser"`)
	if got := l.all(); got[0] != "defer" || got[1] != "thread refactor" {
		t.Fatalf("ops = %q", got)
	}
}

// System messages carry the acting owner as author (and sometimes text,
// such as a new thread's name), but nobody wrote them to Claude; a message
// with neither text nor files starts nothing either.
func TestSystemAndEmptyMessagesStartNothing(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	thread := "100000000000000050"
	for _, ev := range []chat.MessageEvent{
		{Server: "home", ChannelID: channel, MessageID: "a", Type: 18, Author: chat.User{ID: owner}, Content: "my new thread"},
		{Server: "home", ChannelID: thread, ParentID: channel, MessageID: "b", Type: 4, Author: chat.User{ID: owner}, Content: "renamed"},
		{Server: "home", ChannelID: channel, MessageID: "c", Type: 6, Author: chat.User{ID: owner}},
		{Server: "home", ChannelID: thread, ParentID: channel, MessageID: "d", Type: 21, Author: chat.User{ID: owner}},
		{Server: "home", ChannelID: channel, MessageID: "e", Type: 7, Author: chat.User{ID: owner}},
		{Server: "home", ChannelID: channel, MessageID: "f", Author: chat.User{ID: owner}, Content: "  \n "},
		{Server: "home", ChannelID: thread, ParentID: channel, MessageID: "g", Author: chat.User{ID: owner}},
	} {
		r.HandleMessage(ev)
	}
	reply := msg("a reply")
	reply.MessageID, reply.Type = "r", chat.MessageReply
	r.HandleMessage(reply)
	l.waitFor(t, "react r ✅")
	if got := l.all(); !slices.Equal(got, []string{"ensure home-api", `deliver home-api "a reply"`, "react r ✅"}) {
		t.Fatalf("ops = %q", got)
	}
}

// Files that could not be had leave an empty prompt: no session starts.
func TestOnlyFailedAttachmentsStartNothing(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	ev := msg("")
	ev.Attachments = []chat.Attachment{{Name: "gone.txt", URL: "http://x/404", Size: 1}}
	r.HandleMessage(ev)
	deadline := time.Now().Add(5 * time.Second)
	for !slices.ContainsFunc(l.all(), func(op string) bool { return strings.HasPrefix(op, "send ⚠️ Some attachments") }) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	r2 := msg("later")
	r2.MessageID = "m2"
	r.HandleMessage(r2)
	l.waitFor(t, "react m2 ✅")
	ensures := 0
	for _, op := range l.all() {
		if op == "ensure home-api" {
			ensures++
		}
	}
	if ensures != 1 {
		t.Fatalf("a message whose only file failed started the session: %q", l.all())
	}
}

func TestThreadNamesFitDiscord(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	for _, c := range Commands() {
		if c.Name == "thread" && c.Options[0].MaxLength != 100 {
			t.Errorf("/thread name option max_length = %d", c.Options[0].MaxLength)
		}
	}
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "thread",
		Options: map[string]string{"name": strings.Repeat("é", 101)}}, fakeResponder{l: l})
	got := l.all()
	if len(got) != 2 || !strings.Contains(got[1], "at most 100 characters; this one has 101") {
		t.Fatalf("ops = %q", got)
	}
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "thread",
		Options: map[string]string{"name": strings.Repeat("é", 100)}}, fakeResponder{l: l})
	l.waitFor(t, "thread "+strings.Repeat("é", 100))
}

// keyID is the custom_id of a /screen button drawn at a time over a
// screen without a dialog.
func keyID(t *testing.T, key, name string, drawn time.Time) string {
	t.Helper()
	id, err := chat.ID{Instance: "inst1", Kind: "key", Args: []string{key, name, strconv.FormatInt(drawn.Unix(), 36), dialogHash("")}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// An upload is written only as a new file of its own: a symlink planted at
// its name (to ~/.bashrc, say) is not followed, nor is a file replaced.
func TestUploadsDoNotFollowPlantedLinks(t *testing.T) {
	r, ss, rp, l, store := newRouter(t)
	rp.files["http://x/a"] = []byte("PAYLOAD")
	dir, _ := store.Dir.Uploads("home-api")
	victim := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(victim, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "m1-a.txt")); err != nil {
		t.Fatal(err)
	}
	ev := msg("look")
	ev.Attachments = []chat.Attachment{{Name: "a.txt", URL: "http://x/a", Size: 7}}
	r.HandleMessage(ev)
	l.waitFor(t, "react m1 ✅")
	if b, _ := os.ReadFile(victim); string(b) != "original" {
		t.Fatalf("the upload was written through a planted link: %q", b)
	}
	if strings.Contains(ss.delivered[0], "Attached files") {
		t.Fatalf("prompt names a file that was not saved: %q", ss.delivered[0])
	}
	ev2 := msg("again")
	ev2.MessageID = "m2"
	ev2.Attachments = []chat.Attachment{{Name: "b.txt", URL: "http://x/a", Size: 7}}
	r.HandleMessage(ev2)
	l.waitFor(t, "react m2 ✅")
	fi, err := os.Lstat(filepath.Join(dir, "m2-b.txt"))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved upload: %v, %v", fi, err)
	}
}

// A message is not typed while earlier ones wait in Claude Code's queue
// (typed as a turn ends, it would run before them).
func TestDeliveryWaitsForClaudesQueue(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	ss.queued = 2
	r.HandleMessage(msg("after the queue"))
	l.waitFor(t, "react m1 ✅")
	if got := l.all(); !slices.Equal(got, []string{"ensure home-api", "queued", "queued", `deliver home-api "after the queue"`, "react m1 ✅"}) {
		t.Fatalf("ops = %q", got)
	}
}

// Messages held behind a dialog when the daemon stops are not lost
// silently: the one in flight, those queued behind it and one arriving as
// it stops are each marked ⚠️ and told to be sent again, and Wait returns
// only once they are.
func TestStopTellsUndeliveredMessages(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	ctx, cancel := context.WithCancel(context.Background())
	r.ctx = ctx // before any worker starts
	ss.dialogs = 1000
	r.HandleMessage(msg("held by the dialog"))
	second := msg("queued behind it")
	second.MessageID = "m2"
	r.HandleMessage(second)
	deadline := time.Now().Add(5 * time.Second)
	for !slices.ContainsFunc(l.all(), func(op string) bool { return strings.HasPrefix(op, "send ⏳") }) {
		if time.Now().After(deadline) {
			t.Fatalf("the first message never waited on the dialog: %q", l.all())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	late := msg("sent as it stops")
	late.MessageID = "m3"
	r.HandleMessage(late)
	r.Wait()
	got := l.all()
	for _, id := range []string{"m1", "m2", "m3"} {
		if !slices.Contains(got, "react "+id+" ⚠️") {
			t.Errorf("%s was not marked: %q", id, got)
		}
	}
	want := "send " + fmt.Sprintf(notReached, "this message")
	if n := slices.IndexFunc(got, func(op string) bool { return op == want }); n < 0 || strings.Count(strings.Join(got, "\n"), want) != 3 {
		t.Fatalf("not three notices %q: %q", want, got)
	}
	if slices.ContainsFunc(got, func(op string) bool { return strings.HasPrefix(op, "deliver") }) {
		t.Fatalf("delivered: %q", got)
	}
}

// A message typed but not yet confirmed when the daemon stops may have
// reached Claude: it is told to check, not to send it again.
func TestStopDuringTheReceiptSaysToCheck(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	ctx, cancel := context.WithCancel(context.Background())
	r.ctx = ctx
	ss.hold = true
	r.HandleMessage(msg("typed"))
	l.waitFor(t, `deliver home-api "typed"`)
	cancel()
	r.Wait()
	if got := l.all(); !slices.Contains(got, "send "+fmt.Sprintf(notConfirmed, "this message")) || !slices.Contains(got, "react m1 ⚠️") {
		t.Fatalf("ops = %q", got)
	}
}

// A download takes up to a minute: the upload is written only while the
// runtime directory is still the one ccbridge opened, not into one removed
// and made again (by a tmp cleaner, then anyone) meanwhile.
func TestUploadsCheckTheRuntimeDirAgain(t *testing.T) {
	r, ss, rp, l, store := newRouter(t)
	rp.files["http://x/a"] = []byte("PAYLOAD")
	root := store.Dir.Root()
	again := filepath.Join(root, "files", "uploads", "home-api")
	rp.onDownload = func() {
		if err := os.RemoveAll(root); err != nil {
			t.Error(err)
		}
		if err := os.MkdirAll(again, 0o700); err != nil {
			t.Error(err)
		}
	}
	ev := msg("look")
	ev.Attachments = []chat.Attachment{{Name: "a.txt", URL: "http://x/a", Size: 7}}
	r.HandleMessage(ev)
	l.waitFor(t, "react m1 ✅")
	if _, err := os.Stat(filepath.Join(again, "m1-a.txt")); err == nil {
		t.Fatal("the upload was written into a runtime directory made anew")
	}
	if strings.Contains(ss.delivered[0], "Attached files") {
		t.Fatalf("prompt names a file that was not saved: %q", ss.delivered[0])
	}
	if !slices.ContainsFunc(l.all(), func(op string) bool {
		return strings.HasPrefix(op, "send ⚠️ Some attachments were not delivered") && strings.Contains(op, "created again")
	}) {
		t.Fatalf("ops = %q", l.all())
	}
}
