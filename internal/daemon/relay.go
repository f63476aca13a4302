package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// replier posts the router's notices as the right bot.
type replier struct {
	posters map[string]*discord.Poster
}

const noticeTimeout = 10 * time.Second

func (r *replier) poster(server string) (*discord.Poster, error) {
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
	for _, c := range chat.Chunk(text, chat.Limit) {
		sctx, cancel := context.WithTimeout(ctx, noticeTimeout)
		_, err := p.Send(sctx, channelID, c, nil)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
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

func (r *replier) Post(ctx context.Context, server, channelID string, m chat.Message) (string, error) {
	p, err := r.poster(server)
	if err != nil {
		return "", err
	}
	sctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	return p.Post(sctx, channelID, m)
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
	posters  map[string]*discord.Poster
	log      *slog.Logger

	unknownLogged map[string]bool // servers of queued messages not in the config, said once; drainOutbox's goroutine only

	// lockChannel is the store's channel lock; tests wrap it.
	lockChannel func(ctx context.Context, channelID string) (func(), error)
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

// outboxPoll rechecks the outbox even without a change, to retry Discord.
const outboxPoll = 2 * time.Second

// drainOutbox posts queued messages, per channel in order, until ctx ends.
func (r *relay) drainOutbox(ctx context.Context) {
	events, err := r.store.Outbox.Watch(ctx)
	if err != nil {
		r.log.Error("watch outbox", "err", err)
	}
	tick := time.NewTicker(outboxPoll)
	defer tick.Stop()
	for {
		r.drainOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-events:
		case <-tick.C:
		}
	}
}

func (r *relay) drainOnce(ctx context.Context) {
	all, err := r.store.Outbox.List()
	if err != nil {
		r.log.Error("read outbox", "err", err)
	}
	for _, ch := range channelsInOrder(all) {
		r.drainChannel(ctx, ch)
	}
}

// channelsInOrder returns the channels that have queued messages, ordered
// by their oldest message.
func channelsInOrder(all map[string]state.Outbound) []string {
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	seen := map[string]bool{}
	var channels []string
	for _, k := range keys {
		if ch := all[k].ChannelID; !seen[ch] {
			seen[ch] = true
			channels = append(channels, ch)
		}
	}
	return channels
}

// queuedIn returns the keys of a channel's queued messages, oldest first.
func queuedIn(all map[string]state.Outbound, channel string) []string {
	var keys []string
	for k, o := range all {
		if o.ChannelID == channel {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func (r *relay) drainChannel(ctx context.Context, channel string) {
	lock := r.lockChannel
	if lock == nil {
		lock = r.store.Dir.LockChannel
	}
	lctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	unlock, err := lock(lctx, channel)
	cancel()
	if err != nil {
		return // a hook is posting there; next round
	}
	defer unlock()
	// Read the queue again under the lock: whoever held it before (a hook,
	// another daemon) may have posted and deleted entries since.
	all, err := r.store.Outbox.List()
	if err != nil {
		r.log.Error("read outbox", "err", err)
	}
	for _, k := range queuedIn(all, channel) {
		o := all[k]
		p, ok := r.posters[o.Server]
		if !ok {
			// Kept, with the rest of the channel's queue behind it, until
			// that bot is configured again: a reply is never dropped.
			if !r.unknownLogged[o.Server] {
				r.log.Error("queued messages for a server that is not configured; kept until it is", "server", o.Server, "channel", channel)
				r.unknownLogged[o.Server] = true
			}
			return
		}
		var files []chat.File
		for _, path := range o.Files {
			// Only the copies the hook made when it checked the markers.
			b, err := r.store.Dir.ReadAttachment(path)
			if err != nil {
				r.log.Error("queued attachment unreadable; posting without it", "err", err)
				continue
			}
			files = append(files, chat.File{Name: filepath.Base(path), Data: b})
		}
		sctx, cancel := context.WithTimeout(ctx, noticeTimeout)
		_, err := p.SendOnce(sctx, channel, discord.Nonce(k), o.Content, files)
		cancel()
		switch {
		case errors.Is(err, discord.ErrTransient):
			_, _ = r.store.Outbox.Update(ctx, k, func(q *state.Outbound) error { q.Attempts++; q.LastError = err.Error(); return nil })
			return // keep the order: nothing later in this channel goes first
		case err != nil:
			r.log.Error("Discord refused a queued message", "channel", channel, "err", err)
			sctx, cancel := context.WithTimeout(ctx, noticeTimeout)
			_, _ = p.Send(sctx, channel, "⚠️ ccbridge could not post a queued message: "+err.Error(), nil)
			cancel()
		default:
			r.log.Info("queued message delivered", "channel", channel, "attempts", o.Attempts+1)
		}
		if err := r.store.Outbox.Delete(ctx, k); err != nil {
			r.log.Error("delete outbox entry", "err", err)
			return
		}
		for _, path := range o.Files {
			if err := r.store.Dir.RemoveAttachment(path); err != nil {
				r.log.Warn("attachment copy left behind", "err", err)
			}
		}
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
			if now.Sub(last[key]) < typingEvery {
				continue
			}
			p, ok := r.posters[s.Server]
			if !ok {
				continue
			}
			last[key] = now
			tctx, cancel := context.WithTimeout(ctx, noticeTimeout)
			if err := p.Typing(tctx, s.Channel()); err != nil {
				r.log.Debug("typing", "err", err)
			}
			cancel()
		}
	})
}
