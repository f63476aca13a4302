package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/guard"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// replier posts the router's notices as the right bot.
type replier struct {
	posters map[string]chat.Poster
}

const noticeTimeout = 10 * time.Second

// Limit is the most characters one message of server's front end takes
// (0 for a server with no bot): the router cuts what it posts there to it.
func (r *replier) Limit(server string) int {
	if p, ok := r.posters[server]; ok {
		return p.Limit()
	}
	return 0
}

func (r *replier) poster(server string) (chat.Poster, error) {
	p, ok := r.posters[server]
	if !ok {
		return nil, fmt.Errorf("no bot for server %q", server)
	}
	return p, nil
}

func (r *replier) Send(ctx context.Context, server, channelID, text string) error {
	p, err := r.poster(server)
	if err != nil {
		return err
	}
	return p.Notice(ctx, channelID, text, noticeTimeout)
}

func (r *replier) StartThread(ctx context.Context, server, channelID, name string) (string, error) {
	p, err := r.poster(server)
	if err != nil {
		return "", err
	}
	sctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	return p.StartThread(sctx, channelID, name)
}

func (r *replier) StartPrivateThread(ctx context.Context, server, channelID, name string, members []string) (string, []string, error) {
	p, err := r.poster(server)
	if err != nil {
		return "", nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	return p.StartPrivateThread(sctx, channelID, name, members)
}

func (r *replier) EveryoneCanView(ctx context.Context, server, channelID string) (bool, error) {
	p, err := r.poster(server)
	if err != nil {
		return false, err
	}
	sctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	return p.EveryoneCanView(sctx, channelID)
}

func (r *replier) Post(ctx context.Context, server, channelID string, m chat.Message) (string, error) {
	p, err := r.poster(server)
	if err != nil {
		return "", err
	}
	sctx, cancel := context.WithTimeout(ctx, postTimeout(m))
	defer cancel()
	return p.Post(sctx, channelID, m)
}

// PostCard is Post returning also the ids Discord gave the attachments:
// the router binds a message with controls to them.
func (r *replier) PostCard(ctx context.Context, server, channelID string, m chat.Message) (string, []string, error) {
	p, err := r.poster(server)
	if err != nil {
		return "", nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, postTimeout(m))
	defer cancel()
	return p.PostCard(sctx, channelID, m)
}

// postTimeout bounds a post of the router's: a /diff patch may be
// megabytes, and its upload gets the time its size needs on a slow link,
// as a reply's files do.
func postTimeout(m chat.Message) time.Duration {
	var size int64
	for _, f := range m.Files {
		size += int64(len(f.Data))
	}
	return max(noticeTimeout, discord.SendTimeout(size))
}

func (r *replier) ArchiveThread(ctx context.Context, server, threadID string) error {
	p, err := r.poster(server)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	return p.ArchiveThread(sctx, threadID)
}

func (r *replier) React(ctx context.Context, server, channelID, messageID, emoji string) error {
	p, err := r.poster(server)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	return p.React(sctx, channelID, messageID, emoji)
}

func (r *replier) Download(ctx context.Context, url string, limit int64) ([]byte, error) {
	for _, p := range r.posters {
		return p.Download(ctx, url, limit)
	}
	return nil, errors.New("no bot configured")
}

// relay runs the daemon's background work: the outbox, typing, prompt
// sweeping, and remembering conversations.
type relay struct {
	store    *state.Store
	registry *state.Registry
	sessions *session.Manager
	posters  map[string]chat.Poster
	// readers read Discord back (the other machines' panels), which only
	// Discord's client does.
	readers map[string]*discord.Poster
	log     *slog.Logger
	// guard binds the control panel to what it shows (panels.go); nil:
	// the panel's buttons refuse.
	guard *guard.Guard

	unknownLogged map[string]bool // servers of queued messages not in the config, said once; under drainMu

	// lockChannel is the store's channel lock; tests wrap it.
	lockChannel func(ctx context.Context, channelID string) (func(), error)
	// now is the clock of the outbox's backoff; tests step it.
	now func() time.Time

	drainMu  sync.Mutex
	inflight map[string]bool      // channels being drained
	retryAt  map[string]time.Time // channels waiting before their next try
	refused  map[string]string    // servers Discord refuses (401/403), as last logged
	// failTold are channels whose owner was told that a queued message
	// was refused for good, until one gets through again.
	failTold map[string]bool
	health   *state.Collection[state.BotHealth]
	places   *state.Places // reply order (replyPlaces)
	placesMu sync.Mutex
}

// rememberConversations copies each session's Claude session id from the
// runtime directory (where the hooks write it) to the durable registry, so
// that after a reboot the conversation can be resumed.
func (r *relay) rememberConversations(ctx context.Context) {
	synced := map[string]string{}
	r.eachSessionChange(ctx, outboxPoll, func(all map[string]state.Session) {
		for key, s := range all {
			if s.ClaudeSessionID == "" || synced[key] == s.ClaudeSessionID || s.Server == "" || strings.HasPrefix(key, "hand-") {
				continue
			}
			if _, err := r.registry.Sessions.Update(ctx, key, func(g *state.Registered) error {
				g.Server, g.Project, g.ThreadID, g.ClaudeSessionID, g.Updated = s.Server, s.Project, s.ThreadID, s.ClaudeSessionID, time.Now().UTC()
				return nil
			}); err != nil {
				r.log.Error("could not remember a conversation", "session", key, "err", err)
				continue
			}
			synced[key] = s.ClaudeSessionID
		}
	})
}

// eachSessionChange calls fn with every session record after each change
// of the sessions, and at least every period, until ctx ends.
func (r *relay) eachSessionChange(ctx context.Context, every time.Duration, fn func(map[string]state.Session)) {
	events, _ := r.store.Sessions.Watch(ctx)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-events:
		case <-tick.C:
		}
		all, _ := r.store.Sessions.List()
		fn(all)
	}
}

// Typing timing: Discord shows the indicator for about 10 s per call.
const (
	typingEvery = 8 * time.Second
	typingCheck = time.Second
	// A session whose hooks have been silent this long is not shown as busy
	// any more: its turn ended in a way no hook reported.
	typingStale = 15 * time.Minute
)

// typingEveryOn is how often the indicator is renewed on p's platform:
// one whose indicator lasts less than Discord's says so (Telegram: 5 s).
func typingEveryOn(p chat.Poster) time.Duration {
	if l, ok := p.(interface{ TypingLasts() time.Duration }); ok {
		return min(typingEvery, l.TypingLasts()*4/5)
	}
	return typingEvery
}

// showTyping keeps Discord's typing indicator on in the channels of busy
// sessions, from UserPromptSubmit until Stop, StopFailure or an interrupt.
func (r *relay) showTyping(ctx context.Context) {
	last := map[string]time.Time{}
	r.eachSessionChange(ctx, typingCheck, func(all map[string]state.Session) {
		now := time.Now()
		for key, s := range all {
			if !s.Busy || s.PaneID == "" || now.Sub(s.LastEventAt) > typingStale {
				delete(last, key)
				continue
			}
			p, ok := r.posters[s.Server]
			if !ok || now.Sub(last[key]) < typingEveryOn(p) {
				continue
			}
			last[key] = now
			// A short budget: a late indicator is worse than none.
			tctx, cancel := context.WithTimeout(ctx, typingEvery/2)
			if err := p.Typing(tctx, s.Channel()); err != nil {
				r.log.Debug("typing", "err", err)
			}
			cancel()
		}
	})
}
