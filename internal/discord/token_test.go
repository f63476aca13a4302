package discord

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A token pasted with its "Bot " prefix (as Discord's docs show it in
// headers) is used as it would be without.
func TestTokenWithBotPrefix(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		io.WriteString(w, `{"url":"ws://x/gateway"}`)
	}))
	defer srv.Close()
	for _, tok := range []string{"tok", "Bot tok", "bot tok", " Bot  tok\n"} {
		dg, err := NewSession(srv.URL, tok)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dg.Gateway(); err != nil {
			t.Fatal(err)
		}
		if got != "Bot tok" {
			t.Errorf("token %q sent as %q", tok, got)
		}
	}
}
