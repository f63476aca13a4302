package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Live progress: the hooks record each turn's activity (state.Activity);
// the daemon draws it into one message per turn, edited in place, at most
// once per liveDebounce per channel (Discord allows 5 edits / 5 s per
// channel; one message keeps a quiet channel quiet).
const (
	liveDebounce = 1500 * time.Millisecond
	// liveRefresh redraws a running tool's elapsed time.
	liveRefresh = 5 * time.Second
	livePoll    = 250 * time.Millisecond
	// keepActivity is how long a drawn, ended activity is kept.
	keepActivity = time.Hour
)

type liveDrawer struct {
	acts    *state.Collection[state.Activity]
	posters map[string]chat.Poster
	log     *slog.Logger
	now     func() time.Time
	// lastEdit is when the last create or edit of each channel's
	// activity message was answered; drawn when each activity was; gone
	// the activities whose message or channel Discord refused for good
	// (deleted, no access), left alone until they are removed.
	lastEdit map[string]time.Time
	drawn    map[string]time.Time
	gone     map[string]bool
}

func newLiveDrawer(d *state.Dir, posters map[string]chat.Poster, log *slog.Logger) (*liveDrawer, error) {
	acts, err := state.OpenActivities(d)
	if err != nil {
		return nil, err
	}
	return &liveDrawer{acts: acts, posters: posters, log: log, now: time.Now, lastEdit: map[string]time.Time{}, drawn: map[string]time.Time{}, gone: map[string]bool{}}, nil
}

func (l *liveDrawer) loop(ctx context.Context) {
	events, _ := l.acts.Watch(ctx)
	tick := time.NewTicker(livePoll)
	defer tick.Stop()
	for {
		l.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-events:
		case <-tick.C:
		}
	}
}

// once draws every activity that changed (or shows a running tool's time)
// and whose channel is not within its debounce.
func (l *liveDrawer) once(ctx context.Context) {
	all, err := l.acts.List()
	if err != nil {
		l.log.Warn("live progress: read activities", "err", err)
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return all[keys[i]].Started.Before(all[keys[j]].Started) })
	for _, key := range keys {
		a := all[key]
		now := l.now()
		// A day-old turn was interrupted (no Stop ever came) or could not
		// be drawn all day: nothing left to show.
		if now.Sub(a.Started) > 24*time.Hour {
			l.remove(ctx, key)
			continue
		}
		if l.gone[key] {
			continue
		}
		if a.Drawn >= a.Version {
			if !a.Ended.IsZero() && now.Sub(a.Ended) > keepActivity {
				l.remove(ctx, key)
				continue
			}
			// A running tool's time is redrawn, for an hour at most (an
			// interrupted turn never ends its tools).
			if !a.Running() || a.MessageID == "" || now.Sub(l.drawn[key]) < liveRefresh || now.Sub(a.Started) > keepActivity {
				continue
			}
		}
		if now.Sub(l.lastEdit[a.ChannelID]) < liveDebounce {
			continue
		}
		l.draw(ctx, key, a)
	}
}

func (l *liveDrawer) draw(ctx context.Context, key string, a state.Activity) {
	p, ok := l.posters[a.Server]
	if !ok {
		return
	}
	id := a.MessageID
	if id == "" && !a.Ended.IsZero() {
		// The reply is out already: an activity message now would come
		// after it. Nothing to draw.
		l.markDrawn(ctx, key, a.Version, "")
		return
	}
	content := a.Render(l.now(), p.Limit())
	sctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	var err error
	if id == "" {
		id, err = p.Post(sctx, a.ChannelID, chat.Message{Content: content})
	} else {
		err = p.Edit(sctx, a.ChannelID, id, chat.Message{Content: content})
	}
	l.lastEdit[a.ChannelID] = l.now() // answered (or failed): the debounce counts from here
	if err != nil {
		l.log.Warn("live progress not drawn", "channel", a.ChannelID, "err", err)
		// Only a transient failure (a 5xx, a 429, the network) is worth
		// another try; a deleted message or thread or missing access
		// would fail the same way at every pass.
		if !errors.Is(err, chat.ErrTransient) {
			l.gone[key] = true
			l.markDrawn(ctx, key, a.Version, "")
		}
		return
	}
	l.drawn[key] = l.now()
	l.markDrawn(ctx, key, a.Version, id)
}

func (l *liveDrawer) remove(ctx context.Context, key string) {
	_ = l.acts.Delete(ctx, key)
	delete(l.drawn, key)
	delete(l.gone, key)
}

func (l *liveDrawer) markDrawn(ctx context.Context, key string, version int, id string) {
	if _, err := l.acts.Update(ctx, key, func(a *state.Activity) error {
		if a.MessageID == "" {
			a.MessageID = id
		}
		a.Drawn = max(a.Drawn, version)
		return nil
	}); err != nil {
		l.log.Warn("live progress: record not updated", "err", err)
	}
}
