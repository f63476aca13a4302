package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/gateway"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// syncBuffer is a log the daemon writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// With two servers, one whose token Discord refuses: the daemon keeps
// running with the other bot (a crash loop would IDENTIFY it at every
// restart and spend its daily session starts), and says which bot is down
// and why (fidelity review 3, D5).
func TestOneBotThatCannotConnectLeavesTheOthersUp(t *testing.T) {
	dir := daemonEnv(t)
	srv := fakediscord.New(t)
	good, other := srv.Main(), srv.NewBot("other")
	proj := filepath.Join(dir, "proj")
	_ = os.MkdirAll(proj, 0o755)
	cfg := filepath.Join(dir, "config.toml")
	server := func(name, token, guild, channel string) string {
		tok := filepath.Join(dir, name+".token")
		_ = os.WriteFile(tok, []byte(token), 0o600)
		return fmt.Sprintf("[[servers]]\nname = %q\ntoken_file = %q\nguild_id = %q\nowner_ids = [\"100000000000000002\"]\n"+
			"  [[servers.projects]]\n  name = \"p\"\n  channel_id = %q\n  path = %q\n", name, tok, guild, channel, proj)
	}
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf("[discord]\napi_base = %q\n[tmux]\nsocket = \"ccbt-%d\"\n", srv.URL, os.Getpid())+
		server("broken", "not-a-token", other.GuildID, other.ChannelID)+server("home", good.Token, good.GuildID, good.ChannelID)), 0o600)

	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"run", "--config", cfg}, &out, &errb) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errb.String(), "ccbridge running") {
		select {
		case c := <-code:
			t.Fatalf("run ended (exit %d) while one bot could connect:\n%s", c, errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("not running:\n%s", errb.String())
		}
	}
	if n := srv.Stats().Identifies; n != 1 {
		t.Errorf("%d IDENTIFYs, want the good bot's one", n)
	}
	// The broken bot is reported by its retry loop, which runs beside the
	// start: its first report may come after "ccbridge running".
	reported := func(log string) bool {
		return strings.Contains(log, "a bot could not connect") && strings.Contains(log, "server=broken") && strings.Contains(log, "Reset Token")
	}
	for deadline := time.Now().Add(10 * time.Second); !reported(errb.String()) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if log := errb.String(); !reported(log) {
		t.Errorf("the broken bot is not reported:\n%s", log)
	}
	cancel()
	select {
	case c := <-code:
		if c != exitOK {
			t.Errorf("exit %d:\n%s", c, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not stop")
	}
}

// stubHandler takes the events of the bots the connector opens.
type stubHandler struct{ messages chan string }

func (h stubHandler) HandleMessage(ev chat.MessageEvent)                    { h.messages <- ev.Content }
func (stubHandler) HandleCommand(chat.CommandEvent, chat.Responder)         {}
func (stubHandler) HandleComponent(chat.ComponentEvent, chat.Responder)     {}
func (stubHandler) HandleModal(chat.ModalEvent, chat.Responder)             {}
func (stubHandler) HandleAutocomplete(chat.AutocompleteEvent) []chat.Choice { return nil }
func (stubHandler) HandleThreadArchived(string, string, string)             {}
func (stubHandler) HandleThreadDeleted(string, string, string)              {}
func (stubHandler) HandleChannelDeleted(string, string)                     {}

// The connector retries each bot that could not connect on its own: a
// refused token slowly (at the cap), a bot down to its last session starts
// once Discord gives them back, without an IDENTIFY before; meanwhile the
// bot that connected serves.
func TestABotThatCannotConnectIsRetriedAlone(t *testing.T) {
	defer func(f, c time.Duration) { connectRetryFirst, connectRetryCap = f, c }(connectRetryFirst, connectRetryCap)
	connectRetryFirst, connectRetryCap = 20*time.Millisecond, 300*time.Millisecond
	srv := fakediscord.New(t)
	good, limited := srv.Main(), srv.NewBot("limited")
	srv.SetSessionStarts(limited, 3, 400*time.Millisecond)
	servers := []config.Server{
		{Name: "refused", TokenEnv: "CCBT_REFUSED", GuildID: "100000000000000009"},
		{Name: "limited", TokenEnv: "CCBT_LIMITED", GuildID: limited.GuildID},
		{Name: "home", TokenEnv: "CCBT_HOME", GuildID: good.GuildID},
	}
	t.Setenv("CCBT_REFUSED", "not-a-token")
	t.Setenv("CCBT_LIMITED", limited.Token)
	t.Setenv("CCBT_HOME", good.Token)

	h := stubHandler{messages: make(chan string, 10)}
	var mu sync.Mutex
	opens := map[string][]time.Time{}
	problems := map[string][]string{}
	log := slog.New(slog.DiscardHandler)
	c := &connector{log: log, apiBase: srv.URL,
		report: func(server, problem string) {
			mu.Lock()
			defer mu.Unlock()
			problems[server] = append(problems[server], problem)
		},
		open: func(ctx context.Context, s config.Server) (*gateway.Bot, error) {
			mu.Lock()
			opens[s.Name] = append(opens[s.Name], time.Now())
			mu.Unlock()
			return gateway.Open(ctx, log, srv.URL, s, h, nil)
		}}
	if err := c.connectAll(context.Background(), servers); err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if c.connected() != 1 {
		t.Fatalf("%d bots connected at once, want 1", c.connected())
	}
	srv.Post(good.ChannelID, srv.NewUser("owner"), "still here")
	select {
	case m := <-h.messages:
		if m != "still here" {
			t.Fatalf("message %q", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the connected bot does not serve")
	}

	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(opens["refused"])
		mu.Unlock()
		if c.connected() == 2 && n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connected %d; refused tried %d times", c.connected(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(opens["refused"]); i++ {
		if gap := opens["refused"][i].Sub(opens["refused"][i-1]); gap < connectRetryCap*3/4 {
			t.Errorf("a refused token was retried after %v, sooner than the slow pace", gap)
		}
	}
	if got := opens["limited"]; len(got) != 2 || got[1].Sub(got[0]) < 350*time.Millisecond {
		t.Errorf("the limited bot was opened at %v: want once more, after its count reset", got)
	}
	if p := problems["limited"]; len(p) != 2 || !strings.Contains(p[0], "resets the bot's token") || p[1] != "" {
		t.Errorf("the limited bot's reports: %q", p)
	}
	if p := problems["refused"]; len(p) < 2 || !strings.Contains(p[0], "refused the bot token") {
		t.Errorf("the refused bot's reports: %q", p)
	}
	if n := srv.Stats().Identifies; n != 2 {
		t.Errorf("%d IDENTIFYs, want 2 (none while the starts were low)", n)
	}
	if len(opens["home"]) != 1 {
		t.Errorf("the good bot was opened %d times", len(opens["home"]))
	}
}

// The wait between retries of a bot that failed for a passing reason
// doubles up to the cap, spread so machines do not retry together.
func TestConnectRetryWaitBacksOff(t *testing.T) {
	defer func(f, c time.Duration) { connectRetryFirst, connectRetryCap = f, c }(connectRetryFirst, connectRetryCap)
	connectRetryFirst, connectRetryCap = 30*time.Second, 10*time.Minute
	err := errors.New("dial tcp: connection refused")
	for attempt, base := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 10 * time.Minute, 10 * time.Minute} {
		for range 20 {
			if w := retryWait(attempt, err); w < base*3/4 || w > base*5/4 {
				t.Fatalf("attempt %d waits %v, want %v ± 25%%", attempt, w, base)
			}
		}
	}
	if w := retryWait(100, err); w > connectRetryCap*5/4 {
		t.Fatalf("attempt 100 waits %v", w)
	}
	if w := retryWait(0, &gateway.StartLimitError{Remaining: 3, Total: 1000, ResetAfter: 3 * time.Hour}); w < 3*time.Hour {
		t.Fatalf("a spent start limit waits %v, not until the reset", w)
	}
}

// When every bot fails at start for a passing reason (no network at
// login), the daemon does not exit: systemd's start limit would leave it
// failed for good. It retries in-process and connects once it can. It
// exits only when every failure needs a person (a refused token).
func TestEveryBotDownForAPassingReasonIsRetriedInProcess(t *testing.T) {
	defer func(f, c time.Duration) { connectRetryFirst, connectRetryCap = f, c }(connectRetryFirst, connectRetryCap)
	connectRetryFirst, connectRetryCap = 20*time.Millisecond, 300*time.Millisecond
	srv := fakediscord.New(t)
	good := srv.Main()
	t.Setenv("CCBT_HOME", good.Token)
	t.Setenv("CCBT_REFUSED", "not-a-token")
	home := config.Server{Name: "home", TokenEnv: "CCBT_HOME", GuildID: good.GuildID}
	refused := config.Server{Name: "refused", TokenEnv: "CCBT_REFUSED", GuildID: "100000000000000009"}
	log := slog.New(slog.DiscardHandler)
	h := stubHandler{messages: make(chan string, 10)}
	var mu sync.Mutex
	tries := 0
	c := &connector{log: log, apiBase: srv.URL, report: func(string, string) {},
		open: func(ctx context.Context, s config.Server) (*gateway.Bot, error) {
			mu.Lock()
			tries++
			first := tries == 1
			mu.Unlock()
			if first {
				return nil, errors.New("dial tcp: lookup discord.com: no such host")
			}
			return gateway.Open(ctx, log, srv.URL, s, h, nil)
		}}
	if err := c.connectAll(context.Background(), []config.Server{home}); err != nil {
		t.Fatalf("the only bot, without network, ended the daemon: %v", err)
	}
	defer c.close()
	for deadline := time.Now().Add(10 * time.Second); c.connected() != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the bot was not connected once the network came back")
		}
	}

	people := &connector{log: log, apiBase: srv.URL, report: func(string, string) {},
		open: func(ctx context.Context, s config.Server) (*gateway.Bot, error) {
			return gateway.Open(ctx, log, srv.URL, s, h, nil)
		}}
	if err := people.connectAll(context.Background(), []config.Server{refused}); err == nil || !strings.Contains(err.Error(), "refused the bot token") {
		t.Fatalf("a refused token alone: %v, want the daemon to stop and say so", err)
	}
	people.close()
}
