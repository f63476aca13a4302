package voice

import (
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// A transcript longer than a message goes whole in a file beside its start.
func TestLongTranscriptIsAttachedWhole(t *testing.T) {
	words := strings.Repeat("word ", 700)
	m := Transcript("🎙️ heading", words)
	if err := chat.CheckMessage(m); err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 1 || string(m.Files[0].Data) != words {
		t.Fatalf("files = %+v", m.Files)
	}
	if short := Transcript("h", "few words"); len(short.Files) != 0 || !strings.HasSuffix(short.Content, ">>> few words") {
		t.Fatalf("short = %+v", short)
	}
}

// A review is answered once, by the person who sent the voice note, on
// the review message itself, before it expires.
func TestReviewIsAnsweredOnceByItsOwner(t *testing.T) {
	now := time.Now()
	var v Reviews[string]
	rv := &Review[string]{Place: "here", Note: chat.MessageEvent{Author: chat.User{ID: "o"}}, Words: "w", Expires: now.Add(time.Minute)}
	v.Put("n", rv)
	v.Posted(rv, "m1")
	if v.Own(rv, "someone", "m1") || v.Own(rv, "o", "copy") || !v.Own(rv, "o", "m1") {
		t.Fatal("Own lets another person, or another message, answer")
	}
	if _, live := v.Get("n", now.Add(2*time.Minute), false); live {
		t.Fatal("an expired review is live")
	}
	v.Put("n", rv)
	if got, live := v.Get("n", now, true); !live || got != rv {
		t.Fatal("the first answer did not find the review")
	}
	if _, live := v.Get("n", now, true); live {
		t.Fatal("a second answer found the review")
	}
}
