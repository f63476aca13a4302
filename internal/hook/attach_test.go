package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A queued reply uploads the file as it was when the marker was checked:
// a symlink swapped in while the reply waits in the outbox (hours, maybe)
// does not turn it into another file.
func TestQueuedAttachmentIsTheFileThatWasChecked(t *testing.T) {
	r := newRelay(t)
	out, _ := r.store.Dir.Outputs("home-api")
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600)
	os.WriteFile(filepath.Join(out, "out.txt"), []byte("file body"), 0o600)
	r.srv.Fail("POST", "/channels/*/messages", 503, 1000)
	r.stop(t, "p1", "Here. [DISCORD_ATTACH: out.txt]")
	all, _ := r.store.Outbox.List()
	if len(all) != 1 {
		t.Fatalf("outbox = %+v", all)
	}
	// Swap the checked file for a symlink to a private file.
	os.Remove(filepath.Join(out, "out.txt"))
	if err := os.Symlink(secret, filepath.Join(out, "out.txt")); err != nil {
		t.Fatal(err)
	}
	for _, o := range all {
		if len(o.Files) != 1 || filepath.Base(o.Files[0]) != "out.txt" {
			t.Fatalf("queued files = %q", o.Files)
		}
		// What the daemon's drain will upload.
		b, err := os.ReadFile(o.Files[0])
		if err != nil || string(b) != "file body" {
			t.Fatalf("queued attachment reads %q, %v; want the checked file's bytes", b, err)
		}
	}
}

// A hard link in the outputs folder to a file elsewhere (a private key)
// is not attached: the file must have a single link.
func TestHardLinkedAttachmentIsRefused(t *testing.T) {
	r := newRelay(t)
	out, _ := r.store.Dir.Outputs("home-api")
	secret := filepath.Join(filepath.Dir(r.root), "id_ed25519")
	os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600)
	if err := os.Link(secret, filepath.Join(out, "key.txt")); err != nil {
		t.Fatal(err)
	}
	r.stop(t, "p1", "Here. [DISCORD_ATTACH: key.txt]")
	msgs := r.srv.Messages(r.bot.ChannelID)
	if len(msgs) != 1 || len(msgs[0].Files) != 0 {
		t.Fatalf("messages = %+v", msgs)
	}
	if !strings.Contains(msgs[0].Content, "not attached: key.txt") {
		t.Errorf("no note for the refused file: %s", msgs[0].Content)
	}
}
