package telegram

import (
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

const wait = 10 * time.Second

// world is a fake Telegram and a poster of its bot over fresh state.
type world struct {
	tg    *faketelegram.Server
	p     *Poster
	store *state.Telegram
}

func newWorld(t *testing.T) *world {
	t.Helper()
	tg := faketelegram.New(t)
	st := openStore(t, filepath.Join(t.TempDir(), "durable"))
	return &world{tg: tg, p: posterFor(t, tg, st), store: st}
}

func openStore(t *testing.T, dir string) *state.Telegram {
	t.Helper()
	d, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.OpenTelegram(d)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func posterFor(t *testing.T, tg *faketelegram.Server, st *state.Telegram) *Poster {
	t.Helper()
	p, err := NewPoster(tg.URL, tg.Token, "phone", st)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *world) general() string { return strconv.FormatInt(w.tg.ChatID, 10) }

func (w *world) topic(name string) (string, int64) {
	tp := w.tg.AddTopic(name)
	return ChannelID(w.tg.ChatID, tp.MessageThreadID), tp.MessageThreadID
}

func msgID(t *testing.T, id string) int64 {
	t.Helper()
	_, n, err := ParseMessage(id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// recorder is a Handler that records events and runs the test's reactions.
type recorder struct {
	mu         sync.Mutex
	messages   []chat.MessageEvent
	commands   []chat.CommandEvent
	components []chat.ComponentEvent
	modals     []chat.ModalEvent
	archived   []string // "thread<parent"
	onMessage  func(chat.MessageEvent)
	onClick    func(chat.ComponentEvent, chat.Responder)
	onCommand  func(chat.CommandEvent, chat.Responder)
	onModal    func(chat.ModalEvent, chat.Responder)
	changed    chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 100)} }

func (r *recorder) note() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) HandleThreadArchived(server, threadID, parentID string) {
	r.mu.Lock()
	r.archived = append(r.archived, threadID+"<"+parentID)
	r.mu.Unlock()
	r.note()
}

func (r *recorder) HandleMessage(ev chat.MessageEvent) {
	if r.onMessage != nil {
		r.onMessage(ev)
	}
	r.mu.Lock()
	r.messages = append(r.messages, ev)
	r.mu.Unlock()
	r.note()
}

func (r *recorder) HandleCommand(ev chat.CommandEvent, resp chat.Responder) {
	r.mu.Lock()
	r.commands = append(r.commands, ev)
	r.mu.Unlock()
	if r.onCommand != nil {
		r.onCommand(ev, resp)
	}
	r.note()
}

func (r *recorder) HandleComponent(ev chat.ComponentEvent, resp chat.Responder) {
	r.mu.Lock()
	r.components = append(r.components, ev)
	r.mu.Unlock()
	if r.onClick != nil {
		r.onClick(ev, resp)
	}
	r.note()
}

func (r *recorder) HandleModal(ev chat.ModalEvent, resp chat.Responder) {
	r.mu.Lock()
	r.modals = append(r.modals, ev)
	r.mu.Unlock()
	if r.onModal != nil {
		r.onModal(ev, resp)
	}
	r.note()
}

// waitFor waits until cond holds over the recorder's events.
func (r *recorder) waitFor(t *testing.T, what string, cond func(r *recorder) bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		r.mu.Lock()
		ok := cond(r)
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// posts are what a topic shows but its opening service message.
func (w *world) posts(thread int64) []faketelegram.Message {
	var out []faketelegram.Message
	for _, m := range w.tg.Messages(w.tg.ChatID, thread) {
		if m.ForumTopicCreated == nil {
			out = append(out, m)
		}
	}
	return out
}
