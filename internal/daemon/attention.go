package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	hookrelay "github.com/ccbridge/ccbridge/internal/relay"
	"github.com/ccbridge/ccbridge/internal/router"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
	planusage "github.com/ccbridge/ccbridge/internal/usage" // main.go's usage is the CLI's
)

// writePrefs gives the hooks each project's attention settings (footer,
// mirrored prompts, pings) and owners, resolved from the config.
func writePrefs(ctx context.Context, ext *state.Extras, cfg *config.Config) error {
	for _, s := range cfg.Servers {
		// Folders opened with /open have the defaults.
		def := sessionPrefs(config.Project{}.ThreadAttention(""))
		if _, err := ext.Prefs.Update(ctx, state.PrefsKey(s.Name, session.OpenedProject), func(x *state.Prefs) error {
			*x = state.Prefs{Owners: s.OwnerIDs, Project: def, Thread: def}
			return nil
		}); err != nil {
			return err
		}
		for _, p := range s.Projects {
			prefs := state.Prefs{Owners: s.OwnerIDs, Project: sessionPrefs(p.ThreadAttention("")),
				Thread: sessionPrefs(p.Thread.Attention.Over(p.Attention).Resolve())}
			for _, t := range p.Threads {
				if prefs.Threads == nil {
					prefs.Threads = map[string]state.SessionPrefs{}
				}
				prefs.Threads[t.ThreadID] = sessionPrefs(p.ThreadAttention(t.ThreadID))
			}
			if _, err := ext.Prefs.Update(ctx, state.PrefsKey(s.Name, p.Name), func(x *state.Prefs) error { *x = prefs; return nil }); err != nil {
				return err
			}
		}
	}
	return nil
}

func sessionPrefs(r config.Resolved) state.SessionPrefs {
	return state.SessionPrefs{Footer: r.Footer, MirrorTerminal: r.MirrorTerminal, AttentionAfter: r.AttentionAfter, AttentionTurn: r.AttentionTurn}
}

// recordingSessions notes every prompt the router types into a pane, so
// the UserPromptSubmit hook can tell it from one typed at the terminal.
type recordingSessions struct {
	router.Sessions
	ext *state.Extras
	log *slog.Logger
}

// Unwrap gives the router the manager's other abilities (/sessions).
func (s recordingSessions) Unwrap() router.Sessions { return s.Sessions }

func (s recordingSessions) Deliver(ctx context.Context, key, text string) (time.Time, error) {
	if strings.TrimSpace(text) != "" && !strings.HasPrefix(text, "/") {
		if _, err := s.ext.Delivered.Update(ctx, key, func(d *state.Delivered) error {
			d.Add(tmux.Sanitize(text), time.Now())
			return nil
		}); err != nil {
			s.log.Warn("delivered prompt not recorded; it may be mirrored as typed at the terminal", "session", key, "err", err)
		}
	}
	return s.Sessions.Deliver(ctx, key, text)
}

// attentionEvery is how often the daemon looks for cards and dialogs that
// have waited long enough to ping the owners.
const attentionEvery = time.Second

// notifyDelay is how long after a dialog opens Claude sends its
// permission_prompt Notification (docs §4: about 6 s).
const notifyDelay = 6 * time.Second

// attention mentions the owners when a card (or a dialog with no card)
// has waited attention_after unanswered: once per card, once per prompt.
type attention struct {
	store   *state.Store
	ext     *state.Extras
	cfg     *config.Config
	live    atomic.Pointer[config.Config] // a reloaded config, replacing cfg
	posters map[string]chat.Poster
	log     *slog.Logger
	now     func() time.Time
	// sessions types "continue" into a session whose limit has reset;
	// sends are those under way.
	sessions session.Typist
	sends    sync.WaitGroup
}

// conf is the config in use: the last one reloaded, else cfg.
func (a *attention) conf() *config.Config {
	if c := a.live.Load(); c != nil {
		return c
	}
	return a.cfg
}

// keepStatuses is how long the statusLine figures of a Claude session are
// kept after its last message (/usage and the panel show the newest).
const keepStatuses = 7 * 24 * time.Hour

func (a *attention) loop(ctx context.Context) {
	tick := time.NewTicker(attentionEvery)
	defer tick.Stop()
	var pruned time.Time
	defer a.sends.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		a.once(ctx)
		if now := a.now(); now.Sub(pruned) >= pruneEvery {
			if n, err := a.ext.Statuses.Prune(ctx, now.Add(-keepStatuses), maxTurns); err != nil || n > 0 {
				a.log.Info("pruned old statusLine figures", "removed", n, "err", err)
			}
			pruned = now
		}
	}
}

// settings returns the session's attention settings and its server's owners.
func (a *attention) settings(sess state.Session) (state.SessionPrefs, []string, bool) {
	for _, s := range a.conf().Servers {
		if s.Name != sess.Server {
			continue
		}
		if sess.Project == session.OpenedProject { // a folder opened with /open: the defaults
			return sessionPrefs(config.Project{}.ThreadAttention(sess.ThreadID)), s.OwnerIDs, true
		}
		for _, p := range s.Projects {
			if p.Name == sess.Project {
				return sessionPrefs(p.ThreadAttention(sess.ThreadID)), s.OwnerIDs, true
			}
		}
	}
	return state.SessionPrefs{}, nil, false
}

func (a *attention) once(ctx context.Context) {
	now := a.now()
	a.continueAtReset(ctx, now)
	reqs, err := a.store.Requests.List()
	if err != nil {
		a.log.Warn("attention: read requests", "err", err)
	}
	carded := map[string]bool{} // sessions with a card waiting
	cardMade := map[string][]time.Time{}
	for id, req := range reqs {
		cardMade[req.Session] = append(cardMade[req.Session], req.Created)
		if req.Status != state.RequestPending {
			continue
		}
		carded[req.Session] = true
		sess, err := a.store.Sessions.Get(req.Session)
		if err != nil {
			continue
		}
		prefs, owners, ok := a.settings(sess)
		if !ok || prefs.AttentionAfter <= 0 || len(owners) == 0 || now.Sub(req.Created) < prefs.AttentionAfter {
			continue
		}
		a.ping(ctx, "card-"+id, req.Server, req.ChannelID, owners,
			fmt.Sprintf("%s has been waiting %s for your answer on the card above.", speaker(sess.Agent), now.Sub(req.Created).Round(time.Second)))
	}
	waiting, err := a.ext.Waiting.List()
	if err != nil {
		a.log.Warn("attention: read waiting sessions", "err", err)
	}
	for key, w := range waiting {
		if w.Kind != "permission_prompt" || carded[key] || cardFor(cardMade[key], w.At) {
			continue
		}
		sess, err := a.store.Sessions.Get(key)
		// Any event after the notification means the dialog was answered.
		if err != nil || sess.LastEvent != "Notification" || sess.LastEventAt.After(w.At.Add(time.Second)) {
			continue
		}
		prefs, owners, ok := a.settings(sess)
		since := w.At.Add(-notifyDelay)
		if !ok || prefs.AttentionAfter <= 0 || len(owners) == 0 || now.Sub(since) < prefs.AttentionAfter {
			continue
		}
		a.ping(ctx, "wait-"+state.TurnKey(w.ClaudeSessionID, w.PromptID), sess.Server, sess.Channel(), owners,
			fmt.Sprintf("%s is waiting for you in the terminal: %s.", speaker(sess.Agent), strings.TrimSuffix(w.Message, ".")))
	}
}

// ping posts one mention of the owners, claimed under key so it is sent once.
func (a *attention) ping(ctx context.Context, key, server, channel string, owners []string, text string) {
	created, err := a.store.Seen.Create(ctx, "ping-"+key, state.Seen{At: a.now().UTC()})
	if err != nil || !created {
		return
	}
	p, ok := a.posters[server]
	if !ok {
		return
	}
	mentions := make([]string, len(owners))
	for i, o := range owners {
		mentions[i] = "<@" + o + ">"
	}
	sctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	if _, err := p.SendMentioning(sctx, channel, hookrelay.Nonce("ping-"+key), strings.Join(mentions, " ")+" "+text, owners); err != nil {
		a.log.Warn("attention ping not posted", "channel", channel, "err", err)
		return
	}
	a.log.Info("attention ping posted", "channel", channel, "what", key)
}

// continueAtReset sends "continue" to each session whose Continue at reset
// was clicked, once its limit's reset time has passed, and says so. The
// offer is kept in the runtime dir, so a daemon restarted meanwhile still
// sends it; it is removed before typing, so it is sent at most once.
// "continue" goes as the router's messages do (after Claude Code's queue,
// waiting while a dialog is open, to a receipt), each in its own goroutine
// so that a long wait holds no ping back.
func (a *attention) continueAtReset(ctx context.Context, now time.Time) {
	resumes, err := a.ext.Resumes.List()
	if err != nil {
		a.log.Warn("attention: read continue offers", "err", err)
	}
	for key, res := range resumes {
		if !planusage.Due(res, now) || a.sessions == nil {
			continue
		}
		if err := a.ext.Resumes.Delete(ctx, key); err != nil {
			a.log.Warn("continue offer not removed; not sending", "session", key, "err", err)
			continue
		}
		// On a claude.ai plan Claude Code may continue by itself at the
		// reset ("continuing automatically at …").
		if sess, err := a.store.Sessions.Get(key); err == nil && planusage.WentOn(res, sess.LastPromptID) {
			a.log.Info("continue at reset not needed: the session went on", "session", key)
			a.notify(ctx, res, planusage.WentOnText)
			continue
		}
		a.sends.Add(1)
		go func() {
			defer a.sends.Done()
			a.sendContinue(ctx, key, res)
		}()
	}
}

func (a *attention) sendContinue(ctx context.Context, key string, res state.Resume) {
	wait := a.conf().Claude.PromptTimeout.Duration
	sctx, cancel := context.WithTimeout(ctx, wait+time.Minute)
	defer cancel()
	err := session.Send(sctx, a.sessions, key, planusage.Prompt, session.SendOptions{DialogWait: wait})
	text := planusage.SentText
	if err != nil {
		a.log.Warn("continue at reset not delivered", "session", key, "err", err)
		text = planusage.NotSentText(err)
	} else {
		a.log.Info("continue sent at reset", "session", key)
	}
	a.notify(ctx, res, text)
}

// notify says in the offer's channel what became of it.
func (a *attention) notify(ctx context.Context, res state.Resume, text string) {
	p, ok := a.posters[res.Server]
	if !ok {
		return
	}
	if err := p.Notice(ctx, res.ChannelID, text, noticeTimeout); err != nil {
		a.log.Warn("continue notice not posted", "err", err)
	}
}

// cardSlack allows for hooks that run late under load around notifyDelay.
const cardSlack = 10 * time.Second

// cardFor reports whether one of a session's cards was made for the dialog
// a permission_prompt Notification at `at` is about: Claude notifies about
// notifyDelay after the dialog opens, and the card is made as it opens. Such
// a card, answered since, must not turn into a "waiting in the terminal"
// ping in the moment before the next hook event records the answer.
func cardFor(created []time.Time, at time.Time) bool {
	for _, c := range created {
		if !c.After(at) && at.Sub(c) <= notifyDelay+cardSlack {
			return true
		}
	}
	return false
}
