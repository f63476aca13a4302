package discord

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

func TestRewriteSendsToTheBase(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Path + " " + r.Header.Get("Authorization")
		io.WriteString(w, `{"url":"ws://x/gateway"}`)
	}))
	defer srv.Close()
	dg, err := NewSession(srv.URL+"/proxy/", "tok")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dg.Gateway(); err != nil {
		t.Fatal(err)
	}
	if got != "/proxy/api/v9/gateway Bot tok" {
		t.Fatalf("request = %q", got)
	}
	if _, err := HTTPClient("ftp://x"); err == nil {
		t.Error("ftp base accepted")
	}
}

// discordgo's own lines (here: the gateway refusing the connection) go to
// slog, in its format.
func TestRouteLogs(t *testing.T) {
	var buf bytes.Buffer
	RouteLogs(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { discordgo.Logger = nil })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/gateway") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"url":"ws://127.0.0.1:1"}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	dg, err := NewSession(srv.URL, "tok")
	if err != nil {
		t.Fatal(err)
	}
	if err := dg.Open(); err == nil {
		t.Fatal("the gateway was reached")
	}
	if out := buf.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "error connecting to gateway") || !strings.Contains(out, "from=discordgo") {
		t.Errorf("log:\n%s", out)
	}
}
