package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/redact"
)

func TestAppendAndLast(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Append(dir, Entry{Kind: "permission", Asked: fmt.Sprintf("q%d", i), Answer: "allow", From: FromDiscord}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	es, err := Last(dir, 5)
	if err != nil || len(es) != 5 {
		t.Fatalf("Last = %d entries, %v", len(es), err)
	}
	all, _ := Last(dir, 100)
	if len(all) != 20 {
		t.Fatalf("%d entries kept of 20", len(all))
	}
	if st, _ := os.Stat(filepath.Join(dir, File)); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	old := MaxBytes
	MaxBytes = 300
	t.Cleanup(func() { MaxBytes = old })
	for i := range 30 {
		if err := Append(dir, Entry{Kind: "policy", Asked: fmt.Sprintf("call %d", i), Answer: "deny", From: FromPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, File+".1")); err != nil {
		t.Fatalf("not rotated: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%s.%d", File, Keep+1))); err == nil {
		t.Fatal("kept more than Keep rotated files")
	}
	es, _ := Last(dir, 3)
	if len(es) != 3 || es[2].Asked != "call 29" {
		t.Fatalf("last entries %+v", es)
	}
}

// A writer that holds the lock costs the others an entry, not their time.
func TestAppendGivesUpOnAHeldLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lock(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := AppendContext(ctx, dir, Entry{Kind: "policy", Asked: "x"}); err == nil {
		t.Fatal("appended while another writer held the lock")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("gave up after %s", d)
	}
	unlock()
	if err := Append(dir, Entry{Kind: "policy", Asked: "y"}); err != nil {
		t.Fatalf("after the lock was released: %v", err)
	}
}

// Commands and prompts may hold secrets; the log keeps them masked.
func TestAppendRedacts(t *testing.T) {
	dir := t.TempDir()
	SetRedactor(redact.String)
	t.Cleanup(func() { SetRedactor(nil) })
	token := "M" + strings.Repeat("T", 25) + ".Gh1abc." + strings.Repeat("x", 30)
	// The entry keeps 1,999 characters of this: the cut falls inside the
	// token, whose first 49 characters no rule recognizes on their own.
	long := strings.Repeat("a", 1950-len(" ")) + " " + token + " and more"
	for _, e := range []Entry{
		{Kind: "policy", Asked: "Bash: mysql password=hunter2", Rule: "Bash(mysql *)", Detail: "token " + token},
		{Kind: "permission", Asked: long},
	} {
		if err := Append(dir, e); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", token, token[:26]} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the log keeps %q:\n%s", secret, b)
		}
	}
	if !strings.Contains(string(b), "[redacted") || !strings.Contains(string(b), "Bash(mysql *)") {
		t.Errorf("not what was asked, masked:\n%s", b)
	}
}
