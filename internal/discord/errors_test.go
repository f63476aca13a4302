package discord

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// blackHole accepts connections and never answers.
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return "http://" + ln.Addr().String()
}

// With api_base elsewhere, an error names the host that was asked, not
// https://discord.com; a request that is not answered says so.
func TestErrorsNameTheAPIBase(t *testing.T) {
	base := blackHole(t)
	c, err := NewClient(base, "tok")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, _, err = c.Me(ctx)
	var na *NoAnswerError
	if !errors.As(err, &na) || !strings.Contains(err.Error(), "Discord did not answer in ") || !strings.Contains(err.Error(), base+"/api/v9/users/@me") ||
		strings.Contains(err.Error(), "discord.com") {
		t.Errorf("black hole: %v", err)
	}

	// Nothing listens: the refusal names the configured host.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := "http://" + ln.Addr().String()
	ln.Close()
	c, _ = NewClient(refused+"/proxy", "tok")
	_, err = c.Guilds(context.Background())
	if err == nil || !strings.Contains(err.Error(), `"`+refused+`/proxy/api/v9/users/@me/guilds`) || strings.Contains(err.Error(), "discord.com") {
		t.Errorf("refused: %v", err)
	}
}

// A refused token is one thing whether REST (401) or the gateway (close
// 4004) refuses it.
func TestRefusedToken(t *testing.T) {
	srv := fakediscord.New(t)
	c, _ := NewClient(srv.URL, "not-a-token")
	_, _, err := c.Me(context.Background())
	if !RefusedToken(err) {
		t.Errorf("REST 401 not a refused token: %v", err)
	}
	if !RefusedToken(fmt.Errorf("connect: %w", &websocket.CloseError{Code: 4004, Text: "Authentication failed."})) {
		t.Error("close 4004 not a refused token")
	}
	if RefusedToken(&websocket.CloseError{Code: 4014}) || RefusedToken(errors.New("x")) {
		t.Error("other errors taken for a refused token")
	}
}

func TestDisallowedIntents(t *testing.T) {
	err := fmt.Errorf("connect: %w", &websocket.CloseError{Code: 4014, Text: "Disallowed intent(s)."})
	if !DisallowedIntents(err) || DisallowedIntents(&websocket.CloseError{Code: 4004}) || DisallowedIntents(errors.New("x")) {
		t.Error("IntentRefused misread a close")
	}
	e := &IntentError{AppID: "42", Err: err}
	if !DisallowedIntents(e) || !strings.Contains(e.Error(), "https://discord.com/developers/applications/42/bot → Privileged Gateway Intents → Message Content Intent") {
		t.Errorf("IntentError = %q", e.Error())
	}
	if got := (&IntentError{Err: err}).Error(); strings.Contains(got, "applications/") || !strings.Contains(got, "your application") {
		t.Errorf("without an app id: %q", got)
	}
}
