package intake

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

func inbox(t *testing.T, dir string) *Inbox {
	t.Helper()
	reg, err := state.OpenRegistry(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := state.OpenInboxes(reg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return NewInbox(c)
}

func tgMessage(id int, text string) chat.MessageEvent {
	return chat.MessageEvent{Server: "phone", ChannelID: "-1001234567890.42", MessageID: fmt.Sprint(id), Author: chat.User{ID: "7", Name: "owner"},
		Content: text, Attachments: []chat.Attachment{{Name: "a.txt", URL: "tg-file:abc", Size: 3}}}
}

// What is kept survives a reopening (a restart) whole, is read back in id
// order (9 before 10, as numbers), once however often it was put, and only
// what came after the cursor.
func TestInboxKeepsWhatArrivedInOrder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "durable")
	in := inbox(t, dir)
	ctx := context.Background()
	at := time.Now().UTC().Truncate(time.Second)
	for _, id := range []int{10, 9, 11, 10} {
		if err := in.Put(ctx, tgMessage(id, fmt.Sprint("m", id)), at); err != nil {
			t.Fatal(err)
		}
	}
	in = inbox(t, dir)
	all, err := in.After("phone", "-1001234567890.42", "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, k := range all {
		ids = append(ids, k.Event.MessageID)
	}
	if !reflect.DeepEqual(ids, []string{"9", "10", "11"}) {
		t.Fatalf("ids = %v", ids)
	}
	if got := all[1]; !reflect.DeepEqual(got.Event, tgMessage(10, "m10")) || !got.At.Equal(at) {
		t.Fatalf("kept = %+v", got)
	}
	after, _ := in.After("phone", "-1001234567890.42", "9")
	if len(after) != 2 || after[0].Event.MessageID != "10" {
		t.Fatalf("after 9 = %+v", after)
	}
	after, _ = in.After("phone", "-1001234567890.42", "95") // an id never kept
	if len(after) != 0 {
		t.Fatalf("after 95 = %+v", after)
	}
	if other, _ := in.After("phone", "-1001234567890.43", ""); len(other) != 0 {
		t.Fatalf("another topic's inbox = %+v", other)
	}
}

// A held message is read back by id, with the bot's own reactions; one
// never kept is gone, as Discord answers for a deleted message.
func TestInboxMessageByIDAndMarks(t *testing.T) {
	in := inbox(t, filepath.Join(t.TempDir(), "durable"))
	ctx := context.Background()
	if err := in.Put(ctx, tgMessage(5, "voice"), time.Now()); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := in.Mark(ctx, "phone", "-1001234567890.42", "5", "👀"); err != nil {
			t.Fatal(err)
		}
	}
	k, err := in.Message("phone", "-1001234567890.42", "5")
	if err != nil || k.Event.Content != "voice" || !reflect.DeepEqual(k.Marks, []string{"👀"}) {
		t.Fatalf("message 5 = %+v, %v", k, err)
	}
	if _, err := in.Message("phone", "-1001234567890.42", "6"); !errors.Is(err, ErrGone) {
		t.Fatalf("message 6: err = %v, want ErrGone", err)
	}
}

// An inbox forgets what is a week old and keeps the newest max, so
// a busy topic's file stays bounded.
func TestInboxIsBounded(t *testing.T) {
	in := inbox(t, filepath.Join(t.TempDir(), "durable"))
	now := time.Now()
	in.now, in.max = func() time.Time { return now }, 20
	ctx := context.Background()
	if err := in.Put(ctx, tgMessage(1, "old"), now.Add(-8*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	for id := 2; id <= in.max+2; id++ {
		if err := in.Put(ctx, tgMessage(id, "new"), now); err != nil {
			t.Fatal(err)
		}
	}
	all, err := in.After("phone", "-1001234567890.42", "1")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != in.max || all[0].Event.MessageID != "3" {
		t.Fatalf("kept %d, first %s", len(all), all[0].Event.MessageID)
	}
	if _, err := in.Message("phone", "-1001234567890.42", "1"); !errors.Is(err, ErrGone) {
		t.Fatal("a week-old message is still kept")
	}
}
