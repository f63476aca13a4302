package discord

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
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
