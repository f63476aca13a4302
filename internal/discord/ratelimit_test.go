package discord

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// flaky answers the first n calls with a JSON 429 (retry_after 0.2 s),
// then with ok.
func flaky(t *testing.T, n int32, ok string) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) <= n {
			w.WriteHeader(429)
			io.WriteString(w, `{"message":"You are being rate limited.","retry_after":0.2,"global":false}`)
			return
		}
		if ok == "" {
			w.WriteHeader(204)
			return
		}
		io.WriteString(w, ok)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestReactTypingAndThreadsRetryRateLimits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for name, call := range map[string]func(p *Poster) error{
		"react":  func(p *Poster) error { return p.React(ctx, "1", "2", "👀") },
		"typing": func(p *Poster) error { return p.Typing(ctx, "1") },
		"thread": func(p *Poster) error { _, err := p.StartThread(ctx, "1", "t"); return err },
	} {
		t.Run(name, func(t *testing.T) {
			ok := ""
			if name == "thread" {
				ok = `{"id":"9","type":11}`
			}
			srv, calls := flaky(t, 2, ok)
			p, _ := NewPoster(srv.URL, "tok")
			if err := call(p); err != nil {
				t.Fatalf("after two 429s: %v", err)
			}
			if n := calls.Load(); n != 3 {
				t.Fatalf("%d calls, want 3", n)
			}
		})
	}
}

// A bucket that discordgo knows to be empty makes its limiter sleep until
// the reset, ignoring the context: the call returns at the context's end.
func TestWaitsHonourTheContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "5")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset-After", "60")
		w.WriteHeader(204)
	}))
	defer srv.Close()
	p, _ := NewPoster(srv.URL, "tok")
	if err := p.Typing(context.Background(), "1"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := p.Typing(ctx, "1")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Typing returned after %v; its context ended after 300ms", d)
	}
	if !errors.Is(err, ErrTransient) {
		t.Fatalf("err = %v, want a transient error", err)
	}
}

// Cloudflare answers a banned client with an HTML 429 and no retry_after:
// the poster backs off (and says how long) instead of retrying at once.
func TestCloudflareHTML429BacksOff(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(429)
		io.WriteString(w, "<!DOCTYPE html><html><title>Access denied | discord.com used Cloudflare to restrict access</title></html>")
	}))
	defer srv.Close()
	p, _ := NewPoster(srv.URL, "tok")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := p.Send(ctx, "1", "hi", nil)
	if !errors.Is(err, ErrTransient) || RetryAfter(err) < time.Minute {
		t.Fatalf("err = %v (retry after %v); want transient, with a wait of a minute or more", err, RetryAfter(err))
	}
	if n := calls.Load(); n != 1 || time.Since(start) > 2*time.Second {
		t.Fatalf("%d calls in %v; want one, returned at once", n, time.Since(start))
	}
	if strings.Contains(err.Error(), "<html") {
		t.Errorf("the HTML page is in the error: %v", err)
	}
}

// A thread create answered with a 5xx may have been made: it is not
// repeated (there is no nonce for threads), and the error is transient.
func TestStartThreadDoesNotRepeatAfterA5xx(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(500)
		io.WriteString(w, `{"message":"500: Internal Server Error","code":0}`)
	}))
	defer srv.Close()
	p, _ := NewPoster(srv.URL, "tok")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := p.StartThread(ctx, "1", "t"); !errors.Is(err, ErrTransient) {
		t.Fatalf("err = %v, want transient", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d thread creates, want 1", n)
	}
}
