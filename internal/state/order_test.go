package state

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// A backward step of the wall clock must not put a later reply before an
// earlier one in the outbox.
func TestOutboxKeysSurviveAClockStep(t *testing.T) {
	store, err := OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	defer func() { wallNow = time.Now }()
	wallNow = func() time.Time { return now }
	first := store.OutboxKey()
	wallNow = func() time.Time { return now.Add(-time.Hour) } // NTP steps back
	second := store.OutboxKey()
	third := store.OutboxKey()
	if !(first < second && second < third) {
		t.Fatalf("keys out of order after a clock step: %s, %s, %s", first, second, third)
	}
}

// Keys made by other processes on the same runtime dir, with a clock that
// stepped back in between, still sort in the order they were made.
func TestOutboxKeysOrderAcrossProcesses(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	store, err := OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { wallNow = time.Now }()
	wallNow = func() time.Time { return time.Now().Add(time.Hour) } // this process runs an hour ahead
	mine := store.OutboxKey()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STATE_TEST_KEY_ROOT="+root)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	theirs := strings.TrimSpace(string(out))
	keys := []string{theirs, mine}
	sort.Strings(keys)
	if keys[0] != mine {
		t.Fatalf("a key made later in another process sorts first: mine %s, theirs %s", mine, theirs)
	}
}

func helperKey(root string) int {
	store, err := OpenStore(root)
	if err != nil {
		return 1
	}
	os.Stdout.WriteString(store.OutboxKey() + "\n")
	return 0
}

// A receipt written by the hook after the paste counts even if the wall
// clock stepped back in between; a prompt accepted before the paste does
// not count even if the wall clock stepped forward before it was written.
func TestReceiptOrderIgnoresWallClockSteps(t *testing.T) {
	since := time.Now()
	var s Session
	s.AddPrompt(Prompt{At: since.Add(-time.Hour), Text: "after the paste"}) // clock stepped back
	if !s.Prompts[0].NotBefore(since) {
		t.Error("a receipt written after the paste was judged older (wall clock stepped back)")
	}
	boot, ok := bootNanos()
	if !ok {
		t.Fatal("no CLOCK_BOOTTIME")
	}
	early := Prompt{At: since.Add(time.Hour), Text: "before the paste", Boot: boot - int64(time.Since(since)) - int64(time.Second)}
	if early.NotBefore(since) {
		t.Error("a prompt accepted before the paste was taken as its receipt (wall clock stepped forward)")
	}
	legacy := Prompt{At: since.Add(time.Second)}
	if !legacy.NotBefore(since) {
		t.Error("a record without a boot time is not compared by wall time")
	}
}
