package mcp

import (
	"testing"
	"time"
)

// fakeWeb makes the links of the web view.
type fakeWeb struct{ expires time.Time }

func (w fakeWeb) SessionLink(key string) (string, time.Time) {
	return "https://ccb.example/s/" + key + "/", w.expires
}

// claude_status gives the session's web view link, and when it expires,
// when the view is on; nothing when it is off.
func TestStatusLinksTheWebView(t *testing.T) {
	h := newHarness(t, nil)
	key, sid := h.start(t)
	var st StatusOutput
	if text, isErr := h.call(t, "claude_status", map[string]any{"sessionId": sid}, &st); isErr || st.WebURL != "" || st.WebURLExpires != "" {
		t.Fatalf("with the web view off: %q %+v", text, st)
	}
	exp := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	h.srv.opt.Web = fakeWeb{expires: exp}
	st = StatusOutput{}
	if text, isErr := h.call(t, "claude_status", map[string]any{"sessionId": sid}, &st); isErr || st.WebURL != "https://ccb.example/s/"+key+"/" || st.WebURLExpires != "2026-11-29T10:00:00Z" {
		t.Fatalf("with the web view on: %q %+v", text, st)
	}
}
