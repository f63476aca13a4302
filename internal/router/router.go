// Package router turns what people do in a chat front end (Discord's or
// Telegram's messages, commands, clicks) into session operations, after
// checking who may act: only the configured owners of the bot the event
// arrived on, never bots. It is the dispatch: chat event → guard → the
// feature's package (land, opened, schedule, intake, voice, conversations)
// → an answer through a small Replier. It never touches tmux or git itself.
package router

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/guard"
	"github.com/ccbridge/ccbridge/internal/intake"
	"github.com/ccbridge/ccbridge/internal/land"
	"github.com/ccbridge/ccbridge/internal/opened"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/voice"
	"github.com/ccbridge/ccbridge/internal/weblink"
)

// Replier posts the router's own messages (not Claude's replies, which the
// hooks post).
type Replier interface {
	// Send posts a text of ccbridge's own, in as many messages as it takes.
	Send(ctx context.Context, server, channelID, text string) error
	StartThread(ctx context.Context, server, channelID, name string) (string, error)
	// StartPrivateThread starts a thread only its members see, adding
	// members (the first must be; missed: others that could not be).
	StartPrivateThread(ctx context.Context, server, channelID, name string, members []string) (id string, missed []string, err error)
	// EveryoneCanView reports whether every member of the server may
	// view the channel.
	EveryoneCanView(ctx context.Context, server, channelID string) (bool, error)
	Post(ctx context.Context, server, channelID string, m chat.Message) (string, error)
	// PostCard is Post returning also the ids of the message's
	// attachments: a message with controls is bound to them (components.go).
	PostCard(ctx context.Context, server, channelID string, m chat.Message) (string, []string, error)
	React(ctx context.Context, server, channelID, messageID, emoji string) error
	ArchiveThread(ctx context.Context, server, threadID string) error
	Download(ctx context.Context, url string, limit int64) ([]byte, error)
}

// Sessions is what the router asks of the session manager.
type Sessions interface {
	Ensure(ctx context.Context, t session.Target) (string, bool, error)
	Deliver(ctx context.Context, key, text string) (time.Time, error)
	WaitReceipt(ctx context.Context, key string, since time.Time, text string, timeout time.Duration) error
	PressEnter(ctx context.Context, key string) error
	InterruptTurn(ctx context.Context, key string) error
	Screen(ctx context.Context, key string, lines int) (string, error)
	ScreenDialog(key, screen string) (string, error) // the dialog a screen shows, as the session's agent draws it
	PressKeys(ctx context.Context, key string, names ...string) error
	SetMode(ctx context.Context, key, mode string) error
	SetModel(ctx context.Context, key, model string) error
	Status(ctx context.Context, key string) (session.Status, error)
	Stop(ctx context.Context, key string) error
	ReleaseWorktree(ctx context.Context, key string, force bool) (session.Release, error)
	AnswerDialog(ctx context.Context, key, hash string, choice int) error // dialogs.go
}

// Limits and timings.
const (
	maxUploadBytes   = 25 << 20
	downloadTimeout  = 60 * time.Second
	screenLines      = 40
	queuePerSession  = 64
	refusalForOthers = "Only the owners configured for this bot can drive ccbridge."
)

// Options configure a Router.
type Options struct {
	Config   *config.Config
	Sessions Sessions
	Replier  Replier
	Store    *state.Store
	Registry *state.Registry
	Panel    Panel
	Log      *slog.Logger
	Instance string
	Land     land.Git // git for /diff, /commit, /merge, /discard (land.go)
	// Fleet says which of the machines sharing a bot answers for channels
	// none of them maps (nil: this daemon alone).
	Fleet Fleet
	// Transcriber turns voice notes into words (nil: [voice].command).
	Transcriber Transcriber
	// History and Cursors make catch-up work (catchup.go): the last message
	// handled per channel, and what came after it read back on READY.
	// Without them messages sent while ccbridge is down are not read back.
	History History
	Cursors *state.Collection[state.Cursor]
	// Web makes links to the web view (internal/weblink); nil: the view
	// is off.
	Web weblink.Links
	// AgentTitle names a project's agent in notices ("Claude", "Codex"):
	// the core knows the agents, the router only this name. Nil: every
	// project's is Claude.
	AgentTitle func(config.Project) string
	// ResumeHint is the command that continues the conversation id of a
	// project's agent in a terminal. Nil: Claude's, claude --resume.
	ResumeHint func(p config.Project, id string) string
}

// Fleet knows the other machines that share this daemon's bots.
type Fleet interface {
	// Leads reports whether this machine answers for the server's
	// unmapped channels.
	Leads(server string) bool
	// Owner names the other machine whose panel lists a channel, and
	// whether it is up.
	Owner(server, channelID string) (machine string, up, ok bool)
}

// Panel draws a server's control panel.
type Panel interface {
	Render(ctx context.Context, server string) chat.Message
}

type route struct {
	server  config.Server
	project config.Project
}

// Router dispatches events. Messages for one session are handled in order
// by that session's worker.
type Router struct {
	opt     Options
	tab     atomic.Pointer[table] // the config in use (reconfigure.go)
	started atomic.Bool           // StartConfigured ran

	ctx context.Context
	wg  sync.WaitGroup

	mu        sync.Mutex // guards workers, stopping, closing and followers
	workers   map[string]chan item
	stopping  bool                       // the context ended: no message is queued any more
	closing   map[string]bool            // thread sessions being stopped → deleted
	followers map[string]*screenFollower // /screen messages following a pane after a key, by session

	// pending holds a /commit message given in a channel while the person
	// confirms committing in the project checkout (land.go), by session.
	pending sync.Map

	bookOnce sync.Once
	books    *intake.Book // every message claimed, and those in flight (catchup.go)

	voices    voice.Reviews[target] // transcripts waiting for Send (voice.go)
	schedWake chan struct{}         // a schedule was added (schedule.go)
	schedTold sync.Map              // schedule ids whose skipped runs were told (schedule.go)

	now func() time.Time // the clock (tests move it)

	// guard binds the messages with controls the router draws (components.go).
	guard *guard.Guard

	// deletedCap bounds the wait for a deleted thread's turn (0: deletedTurnCap).
	deletedCap time.Duration
}

// target is the session an event belongs to: a project channel's, or a
// thread's under it.
type target struct {
	key      string
	rt       route
	threadID string
}

// resolve finds the session of a channel (or of a thread, by its parent).
func (r *Router) resolve(server, channelID, parentID string) (target, bool) {
	if rt, ok := r.lookup(server, channelID); ok {
		return target{key: rt.server.Name + "-" + rt.project.Name, rt: rt}, true
	}
	if tg, known := r.openedThread(server, channelID); known { // open.go
		return tg, tg.key != ""
	}
	if parentID != "" {
		if rt, ok := r.lookup(server, parentID); ok {
			return target{key: session.ThreadKey(rt.server.Name, rt.project.Name, channelID), rt: rt, threadID: channelID}, true
		}
	}
	return target{}, false
}

// sessionTarget describes how to run a target's session now: its layered
// settings, what was changed from Discord, and the conversation to resume.
func (r *Router) sessionTarget(tg target) (session.Target, error) {
	if tg.rt.project.Name == session.OpenedProject {
		// A message queued before /close must not start the folder's Claude again.
		if cur, known := r.openedThread(tg.rt.server.Name, tg.threadID); known && cur.key == "" {
			return session.Target{}, opened.ErrClosed
		}
	}
	cfg := r.conf()
	tg.rt = current(cfg, tg.rt) // as the config is now, not as when the worker started
	reg, _ := r.opt.Registry.Sessions.Get(tg.key)
	if tg.threadID == "" && reg.ChannelGone != "" && reg.ChannelGone == tg.rt.project.ChannelID {
		return session.Target{}, errChannelGone(tg.rt.project.Name) // channels.go
	}
	var t session.Target
	var err error
	if tg.threadID != "" {
		t, err = session.ThreadTarget(cfg, tg.rt.server, tg.rt.project, tg.threadID, reg)
	} else {
		t, err = session.ProjectTarget(cfg, tg.rt.server, tg.rt.project)
		if reg.Model != "" {
			t.Model = reg.Model
		}
		if reg.PermissionMode != "" {
			t.PermissionMode = reg.PermissionMode
		}
	}
	if err != nil {
		return t, err
	}
	t.Resume = reg.ClaudeSessionID
	t.OnDialog = r.onDialog(tg) // dialogs.go
	_, err = r.opt.Registry.Sessions.Update(r.ctx, tg.key, func(g *state.Registered) error {
		g.Server, g.Project, g.ThreadID, g.Archived, g.Updated = tg.rt.server.Name, tg.rt.project.Name, tg.threadID, false, time.Now().UTC()
		return nil
	})
	return t, err
}

// New builds a Router; its workers stop when ctx ends (see Wait).
func New(ctx context.Context, opt Options) *Router {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	opt.Replier = fittingReplier{opt.Replier} // limits.go
	r := &Router{opt: opt, ctx: ctx, workers: map[string]chan item{}, closing: map[string]bool{}, followers: map[string]*screenFollower{}, now: time.Now, schedWake: make(chan struct{}, 1),
		guard: newGuard(opt)}
	r.opt.Replier = bindingReplier{r.opt.Replier, r} // components.go
	r.Reconfigure(opt.Config)
	return r
}

// Wait blocks until every worker has finished (after the context ends),
// having told each message it held that it was not delivered.
func (r *Router) Wait() { r.wg.Wait() }

// allowed reports whether user may act on server's sessions.
func (r *Router) allowed(server string, u chat.User) bool {
	return !u.Bot && r.tab.Load().owners[server][u.ID]
}

// IsOwner reports whether userID is an owner of server in the config in
// use: a front end that turns strangers away at its door asks here.
func (r *Router) IsOwner(server, userID string) bool { return r.tab.Load().owners[server][userID] }

// lookup finds the project of a channel that belongs to server.
func (r *Router) lookup(server, channelID string) (route, bool) {
	rt, ok := r.routeTable()[channelID]
	return rt, ok && rt.server.Name == server
}

// HandleMessage queues an owner's message in a project channel for its
// session. Anything else is ignored, with no side effect.
func (r *Router) HandleMessage(ev chat.MessageEvent) {
	log := r.opt.Log.With("server", ev.Server, "channel", ev.ChannelID, "author", ev.Author.ID)
	if ev.Author.Bot {
		return
	}
	if !ev.Prompt() {
		// System messages (thread created, renamed, pinned, …) carry the
		// acting owner as author and sometimes text, but nobody wrote them.
		log.Debug("ignored a system message", "type", ev.Type)
		return
	}
	if strings.TrimSpace(ev.Content) == "" && len(ev.Attachments) == 0 {
		return // nothing to say: start nothing
	}
	tg, ok := r.resolve(ev.Server, ev.ChannelID, ev.ParentID)
	if !ok {
		return
	}
	if !r.allowed(ev.Server, ev.Author) {
		log.Info("ignored a message from someone who is not an owner")
		return
	}
	if tg.threadID != "" && ev.ThreadName != "" {
		r.rememberThreadName(tg, ev.ThreadName)
	}
	if audio, ok := ev.Voice(); ok {
		if r.claim(ev) { // catchup.go
			r.voiceNote(tg, ev, audio) // voice.go: beside the queue, not in it
		}
		return
	}
	r.enqueue(tg, item{ev: ev})
}

// rememberThreadName records the name of a thread started in the Discord
// client (/thread records its own), for its worktree and for notices
// about it once it is gone.
func (r *Router) rememberThreadName(tg target, name string) {
	if reg, err := r.opt.Registry.Sessions.Get(tg.key); err == nil && reg.ThreadName != "" {
		return
	}
	r.remember(tg.key, func(g *state.Registered) {
		if g.ThreadName == "" {
			g.Server, g.Project, g.ThreadID, g.ThreadName = tg.rt.server.Name, tg.rt.project.Name, tg.threadID, name
		}
	})
}

// enqueue hands an item to its session's worker, starting the worker.
// Once the daemon is stopping, a message is told so at once. A message
// queued already (read back by catch-up, then arriving live, or the other
// way round) is not queued again.
func (r *Router) enqueue(tg target, it item) {
	switch r.tryEnqueue(tg, it) {
	case enqueueStopped:
		r.tellStopped(notReached, it)
	case enqueueFull:
		r.opt.Log.Warn("session queue full; message dropped", "session", tg.key)
		r.react(it.ev, "⚠️") // handled: catch-up must not deliver it after it was sent again
		r.send(it.ev.Server, it.ev.ChannelID, "⚠️ Too many messages are waiting for this session; this one was not delivered. Send it again shortly.")
		r.release(it.ev) // catchup.go
	}
}

// What tryEnqueue did.
const (
	enqueued = iota
	enqueueDuplicate
	enqueueStopped
	enqueueFull
)

func (r *Router) tryEnqueue(tg target, it item) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping || r.ctx.Err() != nil {
		return enqueueStopped
	}
	q, ok := r.workers[tg.key]
	// Claimed only once the queue has room: a message met by a full queue
	// is tried again (catch-up waits), and must not then pass for one
	// taken already. Every send is under r.mu and the worker only takes,
	// so room seen here is room at the send.
	if ok && len(q) == cap(q) {
		if !it.again && r.book().Claimed(intake.Of(it.ev)) {
			return enqueueDuplicate
		}
		return enqueueFull
	}
	if !it.again && !r.book().Claim(intake.Of(it.ev)) { // catchup.go
		return enqueueDuplicate
	}
	if !ok {
		q = make(chan item, queuePerSession)
		r.workers[tg.key] = q
		r.wg.Add(1)
		go r.work(tg, q)
	}
	q <- it
	return enqueued
}

// work handles a session's messages in order, recording each one handled
// (catchup.go). When the daemon stops, the messages still queued are told
// they were not delivered: with catch-up they will be once ccbridge is
// back; without it nothing would deliver them, and the people who sent them
// would never know.
func (r *Router) work(tg target, q chan item) {
	defer r.wg.Done()
	for {
		select {
		case <-r.ctx.Done():
			r.mu.Lock()
			r.stopping = true // enqueue queues no more: the queue is final
			var left []item
			for len(q) > 0 {
				left = append(left, <-q)
			}
			r.mu.Unlock()
			r.tellStopped(notReached, left...)
			return
		case it := <-q:
			if r.handle(tg, it) {
				r.markHandled(it.ev)
			}
		}
	}
}

// typist notes whether Send typed the text into the pane.
type typist struct {
	session.Typist
	typed bool
}

func (t *typist) Deliver(ctx context.Context, key, text string) (time.Time, error) {
	at, err := t.Typist.Deliver(ctx, key, text)
	t.typed = t.typed || err == nil
	return at, err
}

// deliver runs one message through to a receipt. It reports whether the
// message was handled: delivered, or told why not; false when the daemon
// stopped first (catch-up then handles it once ccbridge is back).
func (r *Router) deliver(tg target, it item) bool {
	ev := it.ev
	ctx := r.ctx
	key := tg.key
	log := r.opt.Log.With("session", key, "message", ev.MessageID)
	if r.stoppedDuring(it, false) {
		return false
	}
	prompt := r.withAttachments(ctx, key, ev)
	if r.stoppedDuring(it, false) {
		return false
	}
	if strings.TrimSpace(prompt) == "" {
		return true // only attachments, and none could be had: start nothing
	}
	target, err := r.sessionTarget(tg)
	if err != nil {
		if r.stoppedDuring(it, false) {
			return false
		}
		r.send(ev.Server, ev.ChannelID, "⚠️ "+chat.ErrText(err))
		return true
	}
	r.markStarting(key, ev) // starting.go
	if _, started, err := r.opt.Sessions.Ensure(ctx, target); err != nil {
		if r.stoppedDuring(it, false) {
			return false
		}
		log.Error("could not start the agent", "err", err)
		r.react(ev, "⚠️")
		r.send(ev.Server, ev.ChannelID, startFailure(r.agentOf(tg), target, err))
		return true
	} else if started {
		log.Info("session started for a message")
	}
	r.recordTyped(key, it, prompt) // catchup.go
	ty := &typist{Typist: r.opt.Sessions}
	agent := r.agentOf(tg)
	err = session.Send(ctx, ty, key, prompt, session.SendOptions{
		DialogWait: r.conf().Claude.PromptTimeout.Duration,
		OnDialog: func() {
			r.react(ev, "⏳")
			r.send(ev.Server, ev.ChannelID, "⏳ "+agent+" is waiting on a prompt in the terminal. Your message will be delivered when it closes (answer it there, or with /screen).")
		},
	})
	switch {
	case err == nil:
		r.react(ev, "✅")
	case r.stoppedDuring(it, ty.typed):
		return false
	case errors.Is(err, session.ErrNoReceipt):
		r.react(ev, "⚠️")
		r.send(ev.Server, ev.ChannelID, "⚠️ "+agent+" did not confirm this message. It may still be sitting in the input box: check with /screen.")
	default:
		log.Error("delivery failed", "err", err)
		r.react(ev, "⚠️")
		r.send(ev.Server, ev.ChannelID, "⚠️ Could not deliver your message to "+agent+": "+chat.ErrText(err))
	}
	return true
}

// startFailure says why agent (its name for people) could not start in t.
func startFailure(agent string, t session.Target, err error) string {
	msg := fmt.Sprintf("⚠️ Could not start %s in `%s`: %s", agent, chat.Clip(t.Dir, 300), chat.ErrText(err))
	var nr *session.NotReadyError
	if errors.As(err, &nr) && nr.Screen != "" {
		// The last lines are the ones that say why; a full pane is
		// thousands of characters.
		screen := []rune(strings.ReplaceAll(strings.TrimRight(nr.Screen, " \n"), "```", "ʼʼʼ"))
		room := chat.Limit - utf8.RuneCountInString(msg) - 60
		if len(screen) > room {
			screen = append([]rune("…"), screen[len(screen)-room:]...)
		}
		msg += "\nLast lines of its screen:\n```\n" + string(screen) + "\n```"
	}
	return msg
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeFileName keeps a name that cannot escape a directory or hide.
func safeFileName(name string) string {
	n := unsafeName.ReplaceAllString(filepath.Base(name), "_")
	n = strings.TrimLeft(n, ".")
	if len(n) > 100 {
		n = n[len(n)-100:]
	}
	if n == "" {
		n = "file"
	}
	return n
}

// withAttachments downloads the message's files into the session's uploads
// folder and appends their paths to the text; a file that cannot be had is
// reported, and the text is delivered anyway.
func (r *Router) withAttachments(ctx context.Context, key string, ev chat.MessageEvent) string {
	prompt := ev.Content
	if len(ev.Attachments) == 0 {
		return prompt
	}
	if _, err := r.opt.Store.Dir.Uploads(key); err != nil { // before downloading anything
		r.send(ev.Server, ev.ChannelID, "⚠️ Attachments not delivered: "+chat.ErrText(err))
		return prompt
	}
	var paths, problems []string
	for _, a := range ev.Attachments {
		if a.Size > maxUploadBytes {
			problems = append(problems, fmt.Sprintf("%s is %.1f MiB (the limit is %d MiB)", chat.Clip(a.Name, 100), float64(a.Size)/(1<<20), maxUploadBytes>>20))
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, downloadTimeout)
		data, err := r.opt.Replier.Download(dctx, a.URL, maxUploadBytes)
		cancel()
		if err != nil {
			problems = append(problems, chat.Clip(a.Name, 100)+": "+chat.ErrText(err))
			continue
		}
		p, err := r.saveUpload(key, ev.MessageID+"-"+safeFileName(a.Name), data)
		if err != nil {
			problems = append(problems, chat.Clip(a.Name, 100)+": "+chat.ErrText(err))
			continue
		}
		paths = append(paths, p)
	}
	if len(problems) > 0 {
		r.send(ev.Server, ev.ChannelID, "⚠️ Some attachments were not delivered (your text was): "+strings.Join(problems, "; "))
	}
	if len(paths) > 0 {
		var b strings.Builder
		b.WriteString(prompt)
		b.WriteString("\n\nAttached files:")
		for _, p := range paths {
			b.WriteString("\n- " + p)
		}
		prompt = b.String()
	}
	return prompt
}

// saveUpload writes a downloaded file into the session's uploads folder,
// asked of the runtime directory again (Dir.Uploads checks it is still the
// private directory ccbridge opened: a download takes up to a minute). The
// file must not exist yet and is never written through a symlink planted
// at its name (Dir.WriteFile would rename over both), and only its owner
// may read it.
func (r *Router) saveUpload(key, name string, data []byte) (string, error) {
	dir, err := r.opt.Store.Dir.Uploads(key)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	// The same message's file saved before a restart (it is read back in
	// flight) leaves a file of ours: the new copy takes a name of its own.
	// Anything else at the name (a planted link) is refused.
	for n := 2; errors.Is(err, fs.ErrExist) && n <= 9 && ownFile(p); n++ {
		p = filepath.Join(dir, fmt.Sprintf("%d-%s", n, name))
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	}
	if err != nil {
		return "", fmt.Errorf("save upload: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(p)
		return "", fmt.Errorf("save upload: %w", err)
	}
	return p, nil
}

// ownFile reports whether p is a regular file of ours (no link).
func ownFile(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() == 0o600
}

func (r *Router) send(server, channel, text string) {
	if err := r.opt.Replier.Send(r.ctx, server, channel, text); err != nil {
		r.opt.Log.Error("could not post a notice", "channel", channel, "err", err)
	}
}

func (r *Router) react(ev chat.MessageEvent, emoji string) {
	if ev.MessageID == "" {
		return // a prompt ccbridge typed itself (/thread's)
	}
	if err := r.opt.Replier.React(r.ctx, ev.Server, ev.ChannelID, ev.MessageID, emoji); err != nil {
		r.opt.Log.Error("could not react", "message", ev.MessageID, "err", err)
	}
}
