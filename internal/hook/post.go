package hook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/relay"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Discord's upload limits for a bot without boosts.
const (
	maxFileBytes    = 10 << 20
	maxFilesPerPost = 10
)

// sendTimeout bounds one notice, retries included. Reply messages get
// relay.UploadTimeout of their size; what does not go through by then goes
// to the outbox for the daemon.
const sendTimeout = 5 * time.Second

// lockWait bounds the wait for a channel's lock (held by another hook or
// the daemon's drain): a reply that cannot get it in time is queued.
var lockWait = 10 * time.Second

// saveTimeout bounds writing a reply to the outbox. The save does not use
// the hook's own context: by then the turn is claimed, and a budget that
// ran out or a signal (the pane was killed) must not lose the reply.
const saveTimeout = 5 * time.Second

// outgoing is one Discord message of a reply.
type outgoing struct {
	content string
	files   []string // paths
	// key is the outbox key the message has, or will have if it is queued;
	// its nonce is derived from it, so a retry by the daemon of a create
	// this hook may already have made is not posted twice.
	key string
}

// place is a message's place in its channel's reply order (state.Places):
// a reply's is taken while Claude waits for its Stop (detach.go); order is
// "" when none could be taken.
type place struct {
	order   string
	release func() // gives the place up; safe to call more than once
}

// holdPlace returns the place taken for this posting run, or takes one in
// the channel's reply order now. A reply that could not get one is posted
// as any other message is, in the order its hook gets to it.
func (h *handler) holdPlace(ctx context.Context, sess state.Session) place {
	none := place{release: func() {}}
	if sess.Channel() == "" {
		return none
	}
	places, err := state.OpenPlaces(h.store.Dir)
	if err != nil {
		h.log.Warn("reply order unavailable", "err", err)
		return none
	}
	if h.order == "" && h.posting {
		h.order = places.Mine(sess.Channel()) // the hook took it, then died before handing it over
	}
	if taken := h.order; taken != "" {
		h.order = ""
		if release, ok := places.Adopt(ctx, h.store, taken, sess.Channel()); ok {
			return place{order: taken, release: sync.OnceFunc(release)}
		}
		h.log.Warn("the place taken at Stop is gone; taking one now", "order", taken)
	}
	order, release, err := places.Hold(ctx, h.store, sess.Channel())
	if err != nil {
		h.log.Warn("reply order unavailable", "err", err)
		return none
	}
	return place{order: order, release: sync.OnceFunc(release)}
}

// postTurn posts a turn's reply (or failure) to the session's channel, in
// the turn's place, and gives the place up. With in, the reply is only
// last_assistant_message so far: the rest of the final message is edited
// in once the transcript holds it (completeReply), before the place goes.
func (h *handler) postTurn(ctx context.Context, sess state.Session, turn state.Turn, pl place, in *claudehook.Input) error {
	defer pl.release()
	text := turn.Reply
	var resetAt time.Time
	var known bool
	failed := turn.Event == "StopFailure"
	if failed {
		text = failureText(turn, h.agentTitle()) // failure.go
		if turn.Error == limitError {
			resetAt, known = h.limitReset(turn)
			text += "\n" + limitNotice(resetAt, known, time.Now())
		}
	}
	// A failed turn's cost and context say nothing the person can use.
	c, err := h.composeReply(sess, turn, text, !failed)
	if err != nil {
		return err
	}
	if len(c.msgs) == 0 {
		h.log.Info("empty reply; nothing to post")
		return nil
	}
	h.tr.mark("composed")
	ids, err := h.deliverAt(ctx, sess, c.msgs, pl.order, 0)
	h.tr.mark("delivered")
	h.flush()
	h.tr.mark("synced")
	// A reply neither posted nor queued has nothing to complete.
	if in != nil && (err == nil || slices.ContainsFunc(ids, func(id string) bool { return id != "" })) {
		c, ids = h.completeReply(ctx, sess, &turn, in, pl.order, c, ids) // complete.go
	}
	pl.release()
	// Sessions ccbridge started run its statusLine, which edits the turn's
	// own figures in; one started by hand has it only if the user set it
	// up. A footer queued in the outbox keeps the figures it has.
	if last := c.chunks - 1; !c.own && h.route == nil && last < len(ids) && ids[last] != "" {
		if aerr := h.awaitFigures(ctx, sess, turn, ids[last], c.msgs[last].content, c.footer); aerr != nil {
			h.log.Warn("footer left as posted", "err", aerr)
		}
	}
	if known {
		err = errors.Join(err, h.offerContinue(ctx, sess, turn.ClaudeSessionID, turn.PromptID, resetAt))
	}
	return err
}

// limitReset is when the limit a turn hit resets, if known.
func (h *handler) limitReset(turn state.Turn) (time.Time, bool) {
	var st *state.Status
	if ext, err := h.extras(); err == nil {
		if s, err := ext.Statuses.Get(turn.ClaudeSessionID); err == nil {
			st = &s
		}
	}
	return limitReset(st, turn.Reply, time.Now())
}

// resolveAttachments maps marker names to files in the outputs directory,
// refusing anything that escapes it (.., absolute paths, symlinks out),
// anything that is not a regular file with a single link, and anything
// Discord would reject, with a note for the person for each. It returns
// copies in the runtime directory, made now: what is uploaded later (maybe
// from the outbox, hours later) is what was checked.
func resolveAttachments(d *state.Dir, dir string, names []string) (files []string, notes []string) {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, []string{"(could not attach files: " + err.Error() + ")"}
	}
	for _, name := range names {
		clean := filepath.Clean(name)
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			notes = append(notes, fmt.Sprintf("(not attached: %s is outside the outputs folder)", name))
			continue
		}
		real, err := filepath.EvalSymlinks(filepath.Join(realDir, clean))
		if err != nil {
			notes = append(notes, fmt.Sprintf("(not attached: %s was not found in the outputs folder)", name))
			continue
		}
		rel, err := filepath.Rel(realDir, real)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			notes = append(notes, fmt.Sprintf("(not attached: %s is outside the outputs folder)", name))
			continue
		}
		fi, err := os.Stat(real)
		switch {
		case err != nil || !fi.Mode().IsRegular():
			notes = append(notes, fmt.Sprintf("(not attached: %s is not a regular file)", name))
		case fi.Size() > maxFileBytes:
			notes = append(notes, fmt.Sprintf("(not attached: %s is %.1f MiB; Discord allows %d MiB)", name, float64(fi.Size())/(1<<20), maxFileBytes>>20))
		default:
			cp, err := d.CopyAttachment(realDir, rel, maxFileBytes)
			var na *state.NotAttachableError
			switch {
			case errors.As(err, &na):
				notes = append(notes, fmt.Sprintf("(not attached: %s %s)", name, na.Reason))
			case err != nil:
				notes = append(notes, fmt.Sprintf("(not attached: %s could not be read)", name))
			default:
				files = append(files, cp)
			}
		}
	}
	return files, notes
}

// composed is a reply as it goes to Discord.
type composed struct {
	msgs   []outgoing
	chunks int    // msgs[:chunks] hold the text; msgs[chunks-1] ends with the footer
	footer string // "" for none
	own    bool   // the footer holds the turn's own figures (see footer)
}

// composeReply cuts a reply's text into messages, masked, with its files
// and, with footer and the session's footer on, the footer.
func (h *handler) composeReply(sess state.Session, turn state.Turn, text string, footer bool) (composed, error) {
	text, names := chat.AttachMarkers(text)
	outputs, err := h.store.Dir.Outputs(h.session)
	if err != nil {
		return composed{}, err
	}
	files, notes := resolveAttachments(h.store.Dir, outputs, names)
	if len(notes) > 0 {
		text = strings.TrimSpace(text + "\n\n" + strings.Join(notes, "\n"))
	}
	limit := h.limit(sess.Server)
	chunks := chat.ChunkMasked(chat.Markdown(text), limit, redact.String)
	c := composed{own: true}
	if prefs, _ := h.prefs(sess); footer && prefs.Footer && len(chunks) > 0 {
		c.footer, c.own = h.footer(sess, turn)
		chunks = withFooter(chunks, c.footer, limit)
	}
	c.msgs, c.chunks = compose(chunks, files), len(chunks)
	return c, nil
}

// compose puts files on the last text chunk, in batches Discord accepts
// (at most 10 files and 10 MiB a message); extra batches follow alone.
func compose(chunks []string, files []string) []outgoing {
	var msgs []outgoing
	for _, c := range chunks {
		msgs = append(msgs, outgoing{content: c})
	}
	var batch []string
	var size int64
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if n := len(msgs); n > 0 && msgs[n-1].files == nil {
			msgs[n-1].files = batch
		} else {
			msgs = append(msgs, outgoing{files: batch})
		}
		batch, size = nil, 0
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			continue
		}
		if len(batch) == maxFilesPerPost || size+fi.Size() > maxFileBytes {
			flush()
		}
		batch = append(batch, f)
		size += fi.Size()
	}
	flush()
	return msgs
}

// deliver posts msgs in order under the channel's lock, after the replies
// of the turns that ended before it was called (see deliverAt).
func (h *handler) deliver(ctx context.Context, sess state.Session, msgs []outgoing) error {
	_, err := h.deliverAt(ctx, sess, msgs, "", 0)
	return err
}

// placeWait bounds the wait for the replies of earlier turns in the
// channel: what cannot wait longer goes to the outbox, which the daemon
// drains behind them.
var placeWait = 10 * time.Second

// deliverAt posts msgs in order under the channel's lock, at order (a
// place in the channel's reply order; "" for none) or, without one, after
// the places held when it was called; first is the index at order of
// msgs[0] (more parts of a reply posted already). If the outbox holds earlier messages
// for the channel, or Discord stays unavailable, the rest goes to the
// outbox, which the daemon drains in order. It returns the ids of the
// messages posted ("" for those queued).
func (h *handler) deliverAt(ctx context.Context, sess state.Session, msgs []outgoing, order string, first int) ([]string, error) {
	ids := make([]string, len(msgs))
	channel := sess.Channel()
	if order != "" {
		for i := range msgs {
			msgs[i].key = state.PartKey(order, first+i) // sorts after every turn that ended before
		}
	}
	if err := h.awaitEarlier(ctx, channel, order); err != nil {
		h.log.Warn("an earlier reply is still being posted; queueing this one behind it", "err", err)
		return ids, h.enqueue(ctx, sess, msgs, "waiting for an earlier reply")
	}
	lctx, cancel := context.WithTimeout(ctx, lockWait)
	unlock, err := h.store.Dir.LockChannel(lctx, channel)
	cancel()
	if err != nil {
		h.log.Warn("channel busy; queueing the reply", "err", err)
		return ids, h.enqueue(ctx, sess, msgs, "channel lock: "+err.Error())
	}
	defer unlock()
	h.tr.mark("locked")
	before := order
	if order != "" && first > 0 && len(msgs) > 0 {
		before = msgs[0].key // the reply's own parts queued already go first
	}
	if queued, _ := h.queuedBefore(channel, before); queued {
		return ids, h.enqueue(ctx, sess, msgs, "earlier messages are still queued")
	}
	poster, _, err := h.poster(sess.Server)
	switch {
	case errors.Is(err, errNoCredentials):
		return ids, h.enqueue(ctx, sess, msgs, "no credentials for server "+sess.Server+" (is the daemon running?)")
	case err != nil:
		return ids, err
	}
	if order == "" {
		for i := range msgs {
			msgs[i].key = h.store.OutboxKey() // after the lock: sorts after what is queued already
		}
	}
	for i, m := range msgs {
		files, err := readFiles(h.store.Dir, m.files)
		if err != nil {
			h.log.Error("attachment unreadable", "err", err)
		}
		var size int64
		for _, f := range files {
			size += int64(len(f.Data))
		}
		// Time in proportion to the upload, within the hook's budget; what
		// does not fit goes to the daemon, which has the time.
		sctx, cancel := context.WithTimeout(ctx, relay.UploadTimeout(size))
		h.tr.mark("send")
		id, err := poster.PostOnce(sctx, channel, relay.Nonce(m.key), chat.Message{Content: m.content, Files: files})
		h.tr.mark("posted")
		cancel()
		switch {
		case errors.Is(err, chat.ErrTransient):
			// The platform, or the daemon, is not there: the daemon
			// delivers it from the outbox once it is.
			h.log.Warn("Discord unavailable; queueing the rest of the reply", "err", err, "left", len(msgs)-i)
			return ids, h.enqueue(ctx, sess, msgs[i:], err.Error())
		case errors.Is(err, chat.ErrMissingPermission) && len(files) > 0:
			// Most likely Attach Files: the daemon posts the text alone,
			// saying where the files are, and the rest after it.
			h.log.Warn("Discord refuses this reply's files; the daemon posts the text", "err", err, "left", len(msgs)-i)
			return ids, h.enqueue(ctx, sess, msgs[i:], err.Error())
		case errors.Is(err, chat.ErrAuth):
			// A bad token or lost access: a person must act, and the
			// reply waits for them in the outbox; the daemon says so.
			h.log.Error("Discord refuses the bot; queueing the rest of the reply", "err", err, "left", len(msgs)-i)
			return ids, h.enqueue(ctx, sess, msgs[i:], err.Error())
		case err != nil:
			// Discord refused this message for good: keep it on the host
			// (text and files) and say so where the reply was due.
			h.log.Error("Discord refused a reply message", "err", err, "files", m.files)
			text := "⚠️ ccbridge could not post part of Claude's reply: " + err.Error()
			o := state.Outbound{Server: sess.Server, ChannelID: channel, Content: m.content, Files: m.files, Created: time.Now().UTC()}
			if path, ferr := h.store.FailOutbound(ctx, m.key, o, err.Error()); ferr == nil {
				text += "\nIt is kept on the ccbridge host in " + path
			} else {
				h.log.Error("refused reply part not kept", "err", ferr)
			}
			h.notice(ctx, poster, channel, text)
			if len(m.files) > 0 {
				continue // the copies are kept: the kept message names them
			}
		default:
			ids[i] = id
			h.log.Info("reply posted", "message", id, "part", i+1, "of", len(msgs))
		}
		removeCopies(h.store.Dir, m.files, h.log)
	}
	return ids, nil
}

// awaitEarlier waits, up to placeWait, until no reply of a turn that ended
// before order (before now, for "") is still being posted in the channel.
func (h *handler) awaitEarlier(ctx context.Context, channel, order string) error {
	places, err := state.OpenPlaces(h.store.Dir)
	if err != nil {
		return nil // no order to keep: post as before
	}
	if places.First(ctx, channel, order) == "" {
		return nil
	}
	if order == "" {
		order = h.store.OutboxKey() // only the places held now
	}
	wctx, cancel := context.WithTimeout(ctx, placeWait)
	defer cancel()
	changes, _ := places.Watch(wctx)
	for {
		select {
		case <-wctx.Done():
			return wctx.Err()
		case <-changes:
		case <-time.After(missedEventPoll):
		}
		if places.First(ctx, channel, order) == "" {
			return nil
		}
	}
}

var errNoCredentials = errors.New("no credentials")

// poster is the poster of a server's bot: the daemon's, through its socket
// (internal/relay). The bot's record, which the daemon writes, says the
// server is configured.
func (h *handler) poster(server string) (chat.Poster, state.Bot, error) {
	bot, err := h.store.Bots.Get(server)
	if err != nil {
		return nil, bot, fmt.Errorf("%w for server %s (is the daemon running?): %w", errNoCredentials, server, err)
	}
	return h.botPoster(server, bot), bot, nil
}

// botPoster is the poster of server's bot, whose record is bot.
func (h *handler) botPoster(server string, bot state.Bot) chat.Poster {
	return relay.NewClient(relay.SocketPath(h.store.Dir.Root()), server, bot.Limit)
}

// chunks cuts text into the messages server's platform takes, masked: the
// chunks are masked already, also those that go to the outbox.
func (h *handler) chunks(server, text string) []string {
	return chat.ChunkMasked(text, h.limit(server), redact.String)
}

// limit is the most characters one message of server's platform holds,
// as the daemon recorded it (Discord's before it has).
func (h *handler) limit(server string) int {
	if bot, err := h.store.Bots.Get(server); err == nil && bot.Limit > 0 {
		return bot.Limit
	}
	return chat.Limit
}

// notice posts a message of ccbridge's own, in chunks the platform accepts.
func (h *handler) notice(ctx context.Context, poster chat.Poster, channel, text string) {
	if err := poster.Notice(ctx, channel, text, sendTimeout); err != nil {
		h.log.Warn("notice not posted", "err", err)
	}
}

// removeCopies deletes the attachment copies of a message that is done with.
func removeCopies(d *state.Dir, paths []string, log *slog.Logger) {
	for _, p := range paths {
		if err := d.RemoveAttachment(p); err != nil {
			log.Warn("attachment copy left behind", "err", err)
		}
	}
}

// queuedBefore reports whether the outbox holds messages for the channel
// that go before order (any, for "").
func (h *handler) queuedBefore(channel, order string) (bool, error) {
	all, err := h.store.Outbox.List()
	for k, o := range all {
		if o.ChannelID == channel && (order == "" || k < order) {
			return true, err
		}
	}
	return false, err
}

func (h *handler) enqueue(ctx context.Context, sess state.Session, msgs []outgoing, why string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	for _, m := range msgs {
		o := state.Outbound{Server: sess.Server, ChannelID: sess.Channel(), Content: m.content, Files: m.files, LastError: why, Created: time.Now().UTC()}
		key := m.key
		if key == "" {
			key = h.store.OutboxKey()
		}
		if _, err := h.store.Outbox.Create(ctx, key, o); err != nil {
			return fmt.Errorf("queue reply: %w", err)
		}
	}
	return nil
}

// readFiles reads the attachment copies of a message.
func readFiles(d *state.Dir, paths []string) ([]chat.File, error) {
	var files []chat.File
	var errs []error
	for _, p := range paths {
		b, err := d.ReadAttachment(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, chat.File{Name: filepath.Base(p), Data: b})
	}
	return files, errors.Join(errs...)
}
