package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/redact"
	hookrelay "github.com/ccbridge/ccbridge/internal/relay"
	"github.com/ccbridge/ccbridge/internal/state"
)

// outboxPoll rechecks the outbox even without a change, to retry Discord.
const outboxPoll = 2 * time.Second

// drainOutbox posts queued messages, per channel in order, until ctx ends.
// Channels drain in parallel: a slow upload in one delays no other.
func (r *relay) drainOutbox(ctx context.Context) {
	events, err := r.store.Outbox.Watch(ctx)
	if err != nil {
		r.log.Error("watch outbox", "err", err)
	}
	// A reply's hook giving up its place lets the messages queued behind
	// it go.
	var released <-chan string
	if p := r.replyPlaces(); p != nil {
		if released, err = p.Watch(ctx); err != nil {
			r.log.Error("watch reply order", "err", err)
		}
	}
	tick := time.NewTicker(outboxPoll)
	defer tick.Stop()
	var running sync.WaitGroup
	defer running.Wait()
	for {
		r.startDrains(ctx, &running)
		select {
		case <-ctx.Done():
			return
		case <-events:
		case <-released:
		case <-tick.C:
		}
	}
}

// drainOnce drains every channel that is due once and waits for it.
func (r *relay) drainOnce(ctx context.Context) {
	var running sync.WaitGroup
	r.startDrains(ctx, &running)
	running.Wait()
}

// startDrains starts draining each channel with queued messages that is
// not being drained already and whose backoff has passed.
func (r *relay) startDrains(ctx context.Context, running *sync.WaitGroup) {
	all, err := r.store.Outbox.List()
	if err != nil {
		r.log.Error("read outbox", "err", err)
	}
	now := r.clock()
	r.drainMu.Lock()
	defer r.drainMu.Unlock()
	if r.inflight == nil {
		r.inflight, r.retryAt = map[string]bool{}, map[string]time.Time{}
	}
	for _, ch := range channelsInOrder(all) {
		if r.inflight[ch] || now.Before(r.retryAt[ch]) {
			continue
		}
		r.inflight[ch] = true
		running.Add(1)
		go func() {
			defer running.Done()
			wait := r.drainChannel(ctx, ch)
			r.drainMu.Lock()
			defer r.drainMu.Unlock()
			delete(r.inflight, ch)
			if wait > 0 {
				r.retryAt[ch] = r.clock().Add(wait)
			} else {
				delete(r.retryAt, ch)
			}
		}()
	}
}

func (r *relay) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
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

// Outbox retry policy.
const (
	// maxFileAttempts bounds the uploads of one queued message: then its
	// text goes alone, with a notice saying where the files are.
	maxFileAttempts = 5
	retryFirst      = 2 * time.Second // backoff after the first failure; doubles
	retryMax        = 5 * time.Minute
	// refusedRetry is how often a bot Discord refuses (401/403) is tried
	// again; its queued replies are kept meanwhile.
	refusedRetry = time.Minute
)

// backoff is the wait after a message's attempts-th transient failure.
func backoff(attempts int) time.Duration {
	return min(retryFirst<<min(max(attempts-1, 0), 10), retryMax)
}

// drainChannel posts a channel's queued messages in order until one has to
// wait, and returns how long (0 when the queue is empty).
func (r *relay) drainChannel(ctx context.Context, channel string) time.Duration {
	lock := r.lockChannel
	if lock == nil {
		lock = r.store.Dir.LockChannel
	}
	lctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	unlock, err := lock(lctx, channel)
	cancel()
	if err != nil {
		return 0 // a hook is posting there; next round
	}
	defer unlock()
	// Read the queue again under the lock: whoever held it before (a hook,
	// another daemon) may have posted and deleted entries since.
	all, err := r.store.Outbox.List()
	if err != nil {
		r.log.Error("read outbox", "err", err)
	}
	held := ""
	if places := r.replyPlaces(); places != nil {
		held = places.First(ctx, channel, "")
	}
	for _, k := range queuedIn(all, channel) {
		if held != "" && k > held {
			// The reply of a turn that ended before these is still with
			// its hook: they follow it (its place given up wakes the drain).
			return 0
		}
		o := all[k]
		p, ok := r.posters[o.Server]
		if !ok {
			// Kept, with the rest of the channel's queue behind it, until
			// that bot is configured again: a reply is never dropped.
			r.drainMu.Lock()
			if !r.unknownLogged[o.Server] {
				r.log.Error("queued messages for a server that is not configured; kept until it is", "server", o.Server, "channel", channel)
				if r.unknownLogged == nil {
					r.unknownLogged = map[string]bool{}
				}
				r.unknownLogged[o.Server] = true
			}
			r.drainMu.Unlock()
			return 0
		}
		t := r.postQueued(ctx, p, channel, k, o)
		if t.wait > 0 {
			return t.wait // keep the order: nothing later in this channel goes first
		}
		if t.refused != nil {
			if !r.keepRefused(ctx, p, channel, k, o, t.refused) {
				return retryFirst
			}
			continue // its files stay: the kept record names them
		}
		r.drainMu.Lock()
		delete(r.failTold, channel)
		r.drainMu.Unlock()
		if err := r.store.Outbox.Delete(ctx, k); err != nil {
			r.log.Error("delete outbox entry", "err", err)
			return retryFirst
		}
		if t.keepCopies {
			continue
		}
		for _, path := range o.Files {
			if err := r.store.Dir.RemoveAttachment(path); err != nil {
				r.log.Warn("attachment copy left behind", "err", err)
			}
		}
	}
	return 0
}

// tried is what one try of a queued message came to.
type tried struct {
	wait       time.Duration // > 0: try again after it; the entry stays
	keepCopies bool          // its files were not posted and stay on disk
	refused    error         // Discord refused it for good (keepRefused)
}

// postQueued tries one queued message once.
func (r *relay) postQueued(ctx context.Context, p chat.Poster, channel, key string, o state.Outbound) tried {
	if len(o.Files) > 0 && o.Attempts >= maxFileAttempts {
		return r.postWithoutFiles(ctx, p, channel, key, o)
	}
	var files []chat.File
	var size int64
	for _, path := range o.Files {
		// Only the copies the hook made when it checked the markers.
		b, err := r.store.Dir.ReadAttachment(path)
		if err != nil {
			r.log.Error("queued attachment unreadable; posting without it", "err", err)
			continue
		}
		files = append(files, chat.File{Name: filepath.Base(path), Data: b})
		size += int64(len(b))
	}
	err := sendParts(ctx, p, channel, key, o.Content, files, size)
	switch {
	case err == nil:
		r.log.Info("queued message delivered", "channel", channel, "attempts", o.Attempts+1)
		r.botAccepted(ctx, o.Server)
		return tried{}
	case errors.Is(err, chat.ErrMissingPermission) && len(files) > 0:
		// Most likely Attach Files: the text goes without the files.
		o.LastError = err.Error()
		return r.postWithoutFiles(ctx, p, channel, key, o)
	case errors.Is(err, chat.ErrAuth):
		r.botRefused(ctx, o.Server, channel, err)
		return tried{wait: refusedRetry, keepCopies: true}
	case errors.Is(err, chat.ErrTransient):
		q, uerr := r.store.Outbox.Update(ctx, key, func(q *state.Outbound) error { q.Attempts++; q.LastError = err.Error(); return nil })
		if uerr != nil {
			r.log.Error("update outbox entry", "err", uerr)
		}
		return tried{wait: max(chat.RetryAfter(err), backoff(q.Attempts)), keepCopies: true}
	default:
		return tried{refused: err, keepCopies: true}
	}
}

// sendParts posts a queued message's text in chunks that fit once the
// poster has redacted them (so a mask longer than its secret cannot make
// Discord refuse the message), with its files on the last. A part's nonce
// comes from the entry's key: a retry after some parts went out posts
// none of them twice. A message that is one part keeps the nonce of the
// entry, which the hook used when it tried first.
func sendParts(ctx context.Context, p chat.Poster, channel, key, content string, files []chat.File, size int64) error {
	parts := chat.ChunkMasked(content, p.Limit(), redact.String)
	if len(parts) == 0 {
		parts = []string{""} // files alone
	}
	for i, c := range parts {
		nonce := hookrelay.Nonce(key) // as the hook's own try
		if i > 0 {
			nonce = hookrelay.Nonce(fmt.Sprintf("%s/part/%d", key, i))
		}
		var fs []chat.File
		var sz int64
		if i == len(parts)-1 {
			fs, sz = files, size
		}
		sctx, cancel := context.WithTimeout(ctx, hookrelay.UploadTimeout(sz))
		_, err := attempt(sctx, p, channel, nonce, chat.Message{Content: c, Files: fs})
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// postWithoutFiles posts a queued message's text with a notice instead of
// files that could not be uploaded in maxFileAttempts tries, so the
// channel's later replies are not held behind them; the files stay on disk.
func (r *relay) postWithoutFiles(ctx context.Context, p chat.Poster, channel, key string, o state.Outbound) tried {
	var names []string
	for _, path := range o.Files {
		names = append(names, "`"+path+"`")
	}
	tries := ""
	if o.Attempts > 0 {
		tries = fmt.Sprintf(" after %d attempts", o.Attempts)
	}
	notice := fmt.Sprintf("⚠️ ccbridge could not upload %d file(s)%s (%s). They are on the ccbridge host: %s",
		len(o.Files), tries, o.LastError, strings.Join(names, ", "))
	r.log.Error("queued attachments could not be uploaded; posting the text alone", "channel", channel, "files", o.Files, "err", o.LastError)
	text := strings.TrimSpace(o.Content + "\n\n" + notice)
	for i, c := range chat.ChunkMasked(text, p.Limit(), redact.String) {
		sctx, cancel := context.WithTimeout(ctx, hookrelay.UploadTimeout(0))
		_, err := attempt(sctx, p, channel, hookrelay.Nonce(fmt.Sprintf("%s/text/%d", key, i)), chat.Message{Content: c})
		cancel()
		switch {
		case err == nil:
		case errors.Is(err, chat.ErrAuth):
			r.botRefused(ctx, o.Server, channel, err)
			return tried{wait: refusedRetry, keepCopies: true}
		case errors.Is(err, chat.ErrTransient):
			return tried{wait: max(chat.RetryAfter(err), retryFirst), keepCopies: true}
		default:
			return tried{refused: err, keepCopies: true}
		}
	}
	return tried{keepCopies: true} // the copies are the only trace of the files now: kept
}

// keepRefused moves a queued message Discord refused for good (a thread
// deleted since: 404; a message it will never take: 400) to the failed
// folder instead of dropping it, and tells the owner where it is kept:
// once for the channel until a message gets through there again, in the
// channel or, when that fails too, in its parent. It reports false when
// the message could not be moved, and stays queued.
func (r *relay) keepRefused(ctx context.Context, p chat.Poster, channel, key string, o state.Outbound, refused error) bool {
	path, err := r.store.FailOutbound(ctx, key, o, refused.Error())
	if err != nil {
		r.log.Error("Discord refused a queued message, which could not be moved aside; it stays queued", "channel", channel, "refused", refused, "err", err)
		return false
	}
	r.log.Error("Discord refused a queued message; it is kept on the host", "channel", channel, "kept", path, "files", o.Files, "err", refused)
	r.drainMu.Lock()
	told := r.failTold[channel]
	if r.failTold == nil {
		r.failTold = map[string]bool{}
	}
	r.failTold[channel] = true
	r.drainMu.Unlock()
	if told {
		return true
	}
	text := fmt.Sprintf("⚠️ ccbridge could not post a queued message in <#%s>: %v\nIt is kept on the ccbridge host in `%s`; until a message gets through there, others refused go to the same folder.", channel, refused, path)
	if len(o.Files) > 0 {
		text += "\nIts files are on the ccbridge host: " + strings.Join(o.Files, ", ")
	}
	if err := r.notice(ctx, p, channel, text); err == nil {
		return true
	}
	if parent := r.parentOf(channel); parent != "" {
		if err := r.notice(ctx, p, parent, text); err != nil {
			r.log.Warn("notice not posted in the parent channel either", "channel", parent, "err", err)
		}
	}
	return true
}

// parentOf finds the channel of the session whose thread is channel ("" if
// none): in the runtime records, else through the durable registry and
// the route of its project.
func (r *relay) parentOf(channel string) string {
	all, _ := r.store.Sessions.List()
	for _, s := range all {
		if s.ThreadID == channel && s.ChannelID != "" {
			return s.ChannelID
		}
	}
	if r.registry == nil {
		return ""
	}
	reg, _ := r.registry.Sessions.List()
	routes, _ := r.store.Routes.Get(state.RoutesKey)
	for _, g := range reg {
		if g.ThreadID != channel {
			continue
		}
		for _, rt := range routes.Routes {
			if rt.Server == g.Server && rt.Project == g.Project {
				return rt.ChannelID
			}
		}
	}
	return ""
}

// notice posts a message of ccbridge's own in chunks Discord accepts.
func (r *relay) notice(ctx context.Context, p chat.Poster, channel, text string) error {
	err := p.Notice(ctx, channel, text, noticeTimeout)
	if err != nil {
		r.log.Warn("notice not posted", "channel", channel, "err", err)
	}
	return err
}

// botRefused keeps the queue and tells the owner, in the log (once per
// change) and in the bot's health record (for the panel).
func (r *relay) botRefused(ctx context.Context, server, channel string, err error) {
	status := discord.HTTPStatus(err)
	r.drainMu.Lock()
	if r.refused == nil {
		r.refused = map[string]string{}
	}
	said := r.refused[server] == err.Error()
	r.refused[server] = err.Error()
	r.drainMu.Unlock()
	queued := 0
	if all, lerr := r.store.Outbox.List(); lerr == nil {
		for _, o := range all {
			if o.Server == server {
				queued++
			}
		}
	}
	if !said {
		hint := "check the bot's token"
		if status == 403 {
			hint = "check the bot's access to the channel"
		}
		r.log.Error("Discord refuses the bot; its queued replies are kept until it accepts it again: "+hint,
			"server", server, "channel", channel, "status", status, "queued", queued, "err", err)
	}
	if h := r.healthRecords(); h != nil {
		_, _ = h.Update(ctx, server, func(b *state.BotHealth) error {
			if b.Refused == "" {
				b.Since = r.clock().UTC()
			}
			b.Refused, b.Status, b.ChannelID, b.Queued = err.Error(), status, channel, queued
			return nil
		})
	}
}

// botAccepted clears a refusal recorded by botRefused (in this run, or
// in an earlier one: checked once per server).
func (r *relay) botAccepted(ctx context.Context, server string) {
	r.drainMu.Lock()
	refused, was := r.refused[server]
	if refused != "" {
		r.log.Info("Discord accepts the bot again", "server", server)
	}
	if r.refused == nil {
		r.refused = map[string]string{}
	}
	r.refused[server] = "" // known good: nothing to clear until refused again
	r.drainMu.Unlock()
	if was && refused == "" {
		return
	}
	if h := r.healthRecords(); h != nil {
		if err := h.Delete(ctx, server); err != nil {
			r.log.Warn("clear bot health", "err", err)
		}
	}
}

func (r *relay) healthRecords() *state.Collection[state.BotHealth] {
	r.drainMu.Lock()
	defer r.drainMu.Unlock()
	if r.health == nil {
		h, err := state.OpenHealth(r.store.Dir)
		if err != nil {
			r.log.Error("open bot health records", "err", err)
			return nil
		}
		r.health = h
	}
	return r.health
}

// replyPlaces opens the channels' reply order once; nil if it cannot be.
func (r *relay) replyPlaces() *state.Places {
	r.placesMu.Lock()
	defer r.placesMu.Unlock()
	if r.places == nil {
		p, err := state.OpenPlaces(r.store.Dir)
		if err != nil {
			r.log.Error("open reply order", "err", err)
			return nil
		}
		r.places = p
	}
	return r.places
}

// attempter is a poster that can try a post once (Discord's), leaving the
// retries to the drain, which keeps the channel's order and backoff.
type attempter interface {
	SendAttempt(ctx context.Context, channelID, nonce, content string, fs []chat.File) (string, error)
}

// attempt posts m once if p can, else with p's own retries within ctx.
func attempt(ctx context.Context, p chat.Poster, channel, nonce string, m chat.Message) (string, error) {
	if a, ok := p.(attempter); ok {
		return a.SendAttempt(ctx, channel, nonce, m.Content, m.Files)
	}
	return p.PostOnce(ctx, channel, nonce, m)
}
