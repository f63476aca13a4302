package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// recorder is a Handler that records what reaches it.
type recorder struct {
	mu       sync.Mutex
	changed  chan struct{}
	messages map[string][]string // channel → contents of default messages, in the order handled
	types    map[string]int      // content → message type
	parents  map[string]string   // content → parent id
	commands []chat.CommandEvent
	archived []string
	deleted  []string
	gone     []string // channels (not threads) deleted
}

func newRecorder() *recorder {
	return &recorder{changed: make(chan struct{}, 1), messages: map[string][]string{}, types: map[string]int{}, parents: map[string]string{}}
}

func (r *recorder) poke() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) HandleMessage(ev chat.MessageEvent) {
	r.mu.Lock()
	if ev.Type == 0 {
		r.messages[ev.ChannelID] = append(r.messages[ev.ChannelID], ev.Content)
	}
	r.types[ev.Content] = ev.Type
	r.parents[ev.Content] = ev.ParentID + "/" + ev.ThreadName
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) HandleCommand(ev chat.CommandEvent, resp chat.Responder) {
	_ = resp.Defer(true)
	r.mu.Lock()
	r.commands = append(r.commands, ev)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) HandleComponent(chat.ComponentEvent, chat.Responder)     {}
func (r *recorder) HandleModal(chat.ModalEvent, chat.Responder)             {}
func (r *recorder) HandleAutocomplete(chat.AutocompleteEvent) []chat.Choice { return nil }
func (r *recorder) HandleThreadArchived(server, threadID, parentID string) {
	r.mu.Lock()
	r.archived = append(r.archived, threadID+"<"+parentID)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) HandleThreadDeleted(server, threadID, parentID string) {
	r.mu.Lock()
	r.deleted = append(r.deleted, threadID+"<"+parentID)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) HandleChannelDeleted(server, channelID string) {
	r.mu.Lock()
	r.gone = append(r.gone, channelID)
	r.mu.Unlock()
	r.poke()
}

// wait waits until cond (called under the lock) holds.
func (r *recorder) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func inOrder(t *testing.T, what string, got, want []string) {
	t.Helper()
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("%s messages handled out of order: at %d got %q, want %q (got %d messages)", what, i, got[min(i, len(got)-1):min(i+5, len(got))], want[i], len(got))
			return
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %d messages, want %d", what, len(got), len(want))
	}
}

func openBot(t *testing.T, srv *fakediscord.Server, h Handler) *Bot {
	t.Helper()
	bot := srv.Main()
	t.Setenv("CCBRIDGE_GW_TEST_TOKEN", bot.Token)
	cfg := config.Server{Name: "home", TokenEnv: "CCBRIDGE_GW_TEST_TOKEN", GuildID: bot.GuildID}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := Open(ctx, slog.New(slog.DiscardHandler), srv.URL, cfg, h, []chat.CommandSpec{
		{Name: "thread", Description: "start a thread", Options: []chat.OptionSpec{{Name: "name", Description: "thread name", Required: true, MaxLength: 100}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	deadline := time.Now().Add(5 * time.Second) // commands are registered after READY
	for len(srv.Commands(bot.GuildID)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return b
}

// Messages of one channel reach the handler in the order Discord created
// them, however fast they come (discordgo alone runs every handler in a
// goroutine of its own, so a burst arrived shuffled).
func TestMessagesOfAChannelKeepTheirOrder(t *testing.T) {
	srv := fakediscord.New(t)
	rec := newRecorder()
	openBot(t, srv, rec)
	owner := srv.NewUser("owner")
	bot := srv.Main()
	thread := srv.StartThread(bot.ChannelID, "side", owner)
	const n = 300
	var want, wantThread []string
	for i := range n {
		want = append(want, fmt.Sprintf("m%03d", i))
		wantThread = append(wantThread, fmt.Sprintf("t%03d", i))
		srv.Post(bot.ChannelID, owner, want[i])
		srv.Post(thread, owner, wantThread[i])
	}
	rec.wait(t, "every message", func() bool { return len(rec.messages[bot.ChannelID]) == n && len(rec.messages[thread]) == n })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	inOrder(t, "channel", rec.messages[bot.ChannelID], want)
	inOrder(t, "thread", rec.messages[thread], wantThread)
	if p := rec.parents["t000"]; p != bot.ChannelID+"/side" {
		t.Errorf("thread message parent/name = %q, want %q", p, bot.ChannelID+"/side")
	}
	if typ, ok := rec.types["side"]; !ok || typ != 18 {
		t.Errorf("the THREAD_CREATED message reached the handler with type %d (seen: %v), want 18", typ, ok)
	}
}

// A slash command in a thread the state cache does not know reaches the
// handler with its parent, and no REST call comes before the answer:
// Discord allows 3 s for it (a fetch on a rate-limited session took longer).
func TestCommandInAnUncachedThreadNeedsNoFetch(t *testing.T) {
	srv := fakediscord.New(t)
	rec := newRecorder()
	b := openBot(t, srv, rec)
	owner := srv.NewUser("owner")
	bot := srv.Main()
	thread := srv.StartThread(bot.ChannelID, "side", owner)
	srv.Post(thread, owner, "first")
	rec.wait(t, "the thread's message", func() bool { return len(rec.messages[thread]) == 1 })
	if err := b.Session.State.ChannelRemove(&discordgo.Channel{ID: thread, GuildID: bot.GuildID}); err != nil {
		t.Fatal(err)
	}
	before := len(srv.Calls())
	it := srv.Command(thread, "thread", owner, map[string]any{"name": "x"})
	srv.WaitResponse(it, 5*time.Second)
	rec.wait(t, "the command", func() bool { return len(rec.commands) == 1 })
	rec.mu.Lock()
	ev := rec.commands[0]
	rec.mu.Unlock()
	if ev.ParentID != bot.ChannelID || ev.ChannelID != thread {
		t.Errorf("command event channel %s parent %q, want %s in %s", ev.ChannelID, ev.ParentID, thread, bot.ChannelID)
	}
	for _, c := range srv.Calls()[before:] {
		if strings.Contains(c.Path, "/callback") {
			break
		}
		t.Errorf("%s %s came before the interaction was answered", c.Method, c.Path)
	}
}

// The registered /thread command limits its name to what Discord accepts
// for a thread name.
func TestThreadNameOptionHasMaxLength(t *testing.T) {
	srv := fakediscord.New(t)
	openBot(t, srv, newRecorder())
	bot := srv.Main()
	cmds := srv.Commands(bot.GuildID)
	if len(cmds) != 1 {
		t.Fatalf("commands = %v", cmds)
	}
	opts, _ := cmds[0]["options"].([]any)
	opt, _ := opts[0].(map[string]any)
	if opt["max_length"] != float64(100) {
		t.Fatalf("option = %v, want max_length 100", opt)
	}
}

// Slash commands are shown to administrators only by default (an admin
// lets others use them in Server Settings → Integrations); a command
// registered without that is written again.
func TestCommandsAreForAdministratorsByDefault(t *testing.T) {
	srv := fakediscord.New(t)
	openBot(t, srv, newRecorder())
	cmds := srv.Commands(srv.Main().GuildID)
	if len(cmds) != 1 || cmds[0]["default_member_permissions"] != "0" {
		t.Fatalf("commands = %v", cmds)
	}
	want := commandOf(chat.CommandSpec{Name: "thread", Description: "d"})
	have := commandOf(chat.CommandSpec{Name: "thread", Description: "d"})
	have.DefaultMemberPermissions = nil
	if sameCommand(have, want) {
		t.Error("a command visible to everyone counts as up to date")
	}
}

// A channel deleted in the bot's guild reaches the handler as a channel,
// not as a thread.
func TestDeletedChannelReachesTheHandler(t *testing.T) {
	srv := fakediscord.New(t)
	r := newRecorder()
	openBot(t, srv, r)
	doomed := srv.AddChannel(srv.Main().GuildID, "doomed")
	srv.DeleteChannel(doomed)
	r.wait(t, "the deleted channel", func() bool { return len(r.gone) == 1 })
	if r.gone[0] != doomed || len(r.deleted) != 0 {
		t.Fatalf("channels gone %q, threads deleted %q", r.gone, r.deleted)
	}
}
