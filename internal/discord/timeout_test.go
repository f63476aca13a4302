package discord

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// slowReader is a create endpoint that reads the request body at about
// 160 KiB/s, as a slow uplink delivers it, then answers; anything else
// hangs until the client gives up.
func slowReader(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/messages") {
			<-r.Context().Done()
			return
		}
		buf := make([]byte, 8<<10)
		for {
			if _, err := r.Body.Read(buf); err == io.EOF {
				break
			} else if err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"1001","channel_id":"1","content":"x"}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// An upload gets the time its caller's deadline gives it (SendTimeout's
// size-scaled time): no fixed per-call cap shorter than that deadline cuts
// it (fidelity review 3, D4). The default bound is scaled down here; the
// shape is Discord's 20 s against a 6 MiB upload at 2 Mbit/s.
func TestASlowUploadGetsItsSendTimeout(t *testing.T) {
	defer func(d time.Duration) { callTimeout = d }(callTimeout)
	callTimeout = 300 * time.Millisecond
	srv := slowReader(t)
	p, err := NewPoster(srv.URL, "tok")
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 128<<10) // about 0.8 s at the server's pace
	ctx, cancel := context.WithTimeout(context.Background(), SendTimeout(int64(len(data))))
	defer cancel()
	start := time.Now()
	if _, err := p.SendAttempt(ctx, "1", "n1", "the build log", []chat.File{{Name: "build.log", Data: data}}); err != nil {
		t.Fatalf("upload after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if p.dg.Client.Timeout != 0 {
		t.Fatalf("the REST client has a fixed timeout of %v", p.dg.Client.Timeout)
	}
}

// A call made without a deadline of its own (discordgo's gateway lookup,
// say) is still bounded.
func TestACallWithoutADeadlineIsBounded(t *testing.T) {
	defer func(d time.Duration) { callTimeout = d }(callTimeout)
	callTimeout = 300 * time.Millisecond
	srv := slowReader(t)
	p, err := NewPoster(srv.URL, "tok")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = p.dg.ChannelTyping("1")
	if took := time.Since(start); err == nil || took > 5*time.Second {
		t.Fatalf("a hanging call without a deadline: %v after %v", err, took)
	}
}
