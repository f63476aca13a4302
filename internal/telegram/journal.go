package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/intake"
	"github.com/ccbridge/ccbridge/internal/state"
)

// The journal: catch-up's history for Telegram. Discord keeps a channel's
// messages and the core reads back what came after its cursor; the Bot API
// keeps nothing a bot has confirmed. So the Bot writes every owner's
// message here before it hands it over (and before its update is
// confirmed), and the Poster notes the marks it reacts with; catch-up
// reads it through Journal as it reads Discord's history.

// Journal limits, per channel: well past any catch-up age, and more
// messages than can wait unhandled.
const (
	journalTTL = 7 * 24 * time.Hour
	journalMax = 500
	// latest is how many messages After gives without a cursor.
	latest = 50
)

// Missed is a message read back from the journal.
type Missed struct {
	Event  chat.MessageEvent
	At     time.Time
	Marked []string // ccbridge's marks on it, as the core wrote them
}

// Journal reads back what owners sent to a Telegram bot's channels.
type Journal struct{ store *state.Telegram }

// Journal returns the journal the Poster's bot writes.
func (p *Poster) Journal() *Journal { return &Journal{store: p.store} }

func journalKey(server, channelID string) string {
	return "j" + server + "@" + channelID
}

// record adds a message handed over to the core.
func (j *Journal) record(ctx context.Context, ev chat.MessageEvent, at time.Time) error {
	raw, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("journal %s: %w", ev.MessageID, err)
	}
	_, err = j.store.Journal.Update(ctx, journalKey(ev.Server, ev.ChannelID), func(jr *state.TelegramJournal) error {
		jr.Server, jr.ChannelID = ev.Server, ev.ChannelID
		if slices.ContainsFunc(jr.Entries, func(e state.TelegramEntry) bool { return e.MessageID == ev.MessageID }) {
			return nil // handed over again after a restart
		}
		jr.Entries = append(jr.Entries, state.TelegramEntry{MessageID: ev.MessageID, At: at.UTC(), Event: raw})
		slices.SortFunc(jr.Entries, func(a, b state.TelegramEntry) int {
			if state.SnowflakeLess(a.MessageID, b.MessageID) {
				return -1
			}
			return 1
		})
		cut := 0
		for cut < len(jr.Entries) && (time.Since(jr.Entries[cut].At) > journalTTL || len(jr.Entries)-cut > journalMax) {
			cut++
		}
		jr.Entries = jr.Entries[cut:]
		return nil
	})
	if err != nil {
		return fmt.Errorf("journal %s: %w", ev.MessageID, err)
	}
	return nil
}

// mark notes one of ccbridge's marks on a journaled message.
func (j *Journal) mark(ctx context.Context, server, channelID, messageID, mark string) error {
	key := journalKey(server, channelID)
	if _, err := j.store.Journal.Get(key); err != nil {
		return nil // no journal here: not an owner's message of this bot
	}
	_, err := j.store.Journal.Update(ctx, key, func(jr *state.TelegramJournal) error {
		for i := range jr.Entries {
			if e := &jr.Entries[i]; e.MessageID == messageID && !slices.Contains(e.Marked, mark) {
				e.Marked = append(e.Marked, mark)
			}
		}
		return nil
	})
	return err
}

func (j *Journal) read(server, channelID string) ([]Missed, error) {
	jr, err := j.store.Journal.Get(journalKey(server, channelID))
	if err != nil {
		return nil, nil
	}
	out := make([]Missed, 0, len(jr.Entries))
	for _, e := range jr.Entries {
		var ev chat.MessageEvent
		if err := json.Unmarshal(e.Event, &ev); err != nil {
			return nil, fmt.Errorf("read the journal of %s: %w", channelID, err)
		}
		out = append(out, Missed{Event: ev, At: e.At, Marked: slices.Clone(e.Marked)})
	}
	return out, nil
}

// After returns, oldest first, the journaled messages of a channel after
// afterID (with "" only the latest ones), as the core's History does.
func (j *Journal) After(_ context.Context, server, channelID, afterID string) ([]Missed, error) {
	all, err := j.read(server, channelID)
	if err != nil {
		return nil, err
	}
	if afterID == "" {
		return all[max(len(all)-latest, 0):], nil
	}
	var out []Missed
	for _, m := range all {
		if state.SnowflakeLess(afterID, m.Event.MessageID) {
			out = append(out, m)
		}
	}
	return out, nil
}

// Message reads one journaled message; one not there (pruned, or never an
// owner's) is intake.ErrGone.
func (j *Journal) Message(_ context.Context, server, channelID, messageID string) (Missed, error) {
	all, err := j.read(server, channelID)
	if err != nil {
		return Missed{}, err
	}
	for _, m := range all {
		if m.Event.MessageID == messageID {
			return m, nil
		}
	}
	return Missed{}, fmt.Errorf("message %s of %s: %w", messageID, channelID, intake.ErrGone)
}
