package web

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/redact"
)

func TestFilesShowsTheFolderHighlighted(t *testing.T) {
	e := newEnv(t)
	p := e.path(SessionScope("proj"))
	w := e.get(t, p+"files/")
	b := body(t, w)
	if w.Code != http.StatusOK || !strings.Contains(b, `href="../files/src/"`) {
		t.Fatalf("folder = %d %q", w.Code, b)
	}
	w = e.get(t, p+"files/src/main.go")
	b = body(t, w)
	if w.Code != http.StatusOK || !strings.Contains(b, `<span class="kd">func</span>`) && !strings.Contains(b, `<span class="k">func</span>`) {
		t.Fatalf("main.go = %d, not highlighted: %q", w.Code, b)
	}
	if strings.Contains(b, "style=") {
		t.Error("inline style on the page: the CSP forbids it")
	}
	if w := e.get(t, p+"files/src"); w.Code != http.StatusFound || w.Header().Get("Location") != "./src/" {
		t.Errorf("folder without its slash = %d %q, want a redirect to ./src/", w.Code, w.Header().Get("Location"))
	}
}

func TestFilesRefusesOutsideTheFolder(t *testing.T) {
	e := newEnv(t)
	p := e.path(SessionScope("proj"))
	outside := filepath.Join(filepath.Dir(e.dir), "outside")
	if err := os.MkdirAll(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(outside, "secret.txt"), "OUTSIDE-SECRET")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(e.dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		p + "files/../outside/secret.txt",
		p + "files/%2e%2e/outside/secret.txt",
		p + "files/src/%2E%2E/%2e%2e/outside/secret.txt",
		p + "files/..%2Foutside%2Fsecret.txt",
		p + "files/src/..%5C..%5Coutside%5Csecret.txt",
		p + "files//" + strings.TrimPrefix(filepath.Join(outside, "secret.txt"), "/"),
		p + "files/link.txt",
		p + "files/linkdir/secret.txt",
		p + "files/linkdir/",
		p + "files/.git/config",
	} {
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		if b := body(t, w); w.Code == http.StatusOK || strings.Contains(b, "OUTSIDE-SECRET") {
			t.Errorf("GET %s = %d, want a refusal; body %q", target, w.Code, b)
		}
	}
	// The listing does not offer the links out.
	if b := body(t, e.get(t, p+"files/")); strings.Contains(b, "link.txt") || strings.Contains(b, "linkdir") {
		t.Errorf("the listing names a symlink out of the folder: %q", b)
	}
}

func TestFilesRefusesDeniedAndPrivateFiles(t *testing.T) {
	e := newEnv(t)
	p := e.path(SessionScope("proj"))
	refused(t, e, p+"files/secrets/prod.key", "a path the policy denies reading")
	refused(t, e, p+"files/bot.token", "the token file")
	// Through a symlink inside the folder, still refused.
	if err := os.Symlink(e.token, filepath.Join(e.dir, "innocent")); err != nil {
		t.Fatal(err)
	}
	refused(t, e, p+"files/innocent", "the token file through a symlink")
	b := body(t, e.get(t, p+"files/"))
	for _, name := range []string{"bot.token", "innocent"} {
		if strings.Contains(b, name) {
			t.Errorf("the listing names %s", name)
		}
	}
	if !strings.Contains(b, "src/") {
		t.Errorf("the listing lost src/: %q", b)
	}
}

func TestFilesRefusesTheStateDir(t *testing.T) {
	e := newEnv(t)
	// A session whose folder holds the state dir (a home-folder session).
	e.sessions.list[0].Dir = filepath.Dir(e.h.opt.StateDir)
	p := e.path(SessionScope("proj"))
	refused(t, e, p+"files/state/web/links.json", "the signing key")
}

func TestFilesRedactedAndCapped(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxFileBytes = 64 })
	write(t, filepath.Join(e.dir, "conf.txt"), "password = hunter2hunter2\n")
	write(t, filepath.Join(e.dir, "big.txt"), strings.Repeat("x", 65))
	write(t, filepath.Join(e.dir, "blob.bin"), "\x00\x01\x02")
	p := e.path(SessionScope("proj"))
	if b := body(t, e.get(t, p+"files/conf.txt")); strings.Contains(b, "hunter2hunter2") || !strings.Contains(b, "[redacted]") {
		t.Errorf("conf.txt not redacted: %q", b)
	}
	if b := body(t, e.get(t, p+"files/big.txt")); strings.Contains(b, "xxxxxxxx") || !strings.Contains(b, "Too large") {
		t.Errorf("big.txt shown past the cap: %q", b)
	}
	if b := body(t, e.get(t, p+"files/blob.bin")); !strings.Contains(b, "Binary file") {
		t.Errorf("blob.bin not named binary: %q", b)
	}
}

// TestPathChecks: each layer of the Files page's checks holds on its own
// (the page stacks them: cleanRel, then within on resolved paths, then
// os.Root).
func TestPathChecks(t *testing.T) {
	for rel, ok := range map[string]bool{
		"": true, "src/main.go": true, "src//a/./b": true, "a..b/c": true,
		"..": false, "src/../../x": false, "/etc/passwd": false, "a\\..\\b": false, "a\x00": false, ".git/config": false, "sub/.git/HEAD": false,
	} {
		if _, got := cleanRel(rel); got != ok {
			t.Errorf("cleanRel(%q) = %v, want %v", rel, got, ok)
		}
	}
	for _, c := range []struct {
		dir, p string
		ok     bool
	}{
		{"/w/proj", "/w/proj", true}, {"/w/proj", "/w/proj/a", true}, {"/w/proj/", "/w/proj/a", true},
		{"/w/proj", "/w/project/a", false}, {"/w/proj", "/w", false}, {"/w/proj", "/w/proj-2", false},
	} {
		if got := within(c.dir, c.p); got != c.ok {
			t.Errorf("within(%q, %q) = %v, want %v", c.dir, c.p, got, c.ok)
		}
	}
}

// TestFilesDeniedNamesDoNotLeak: a missing file where reading is denied is
// refused like an existing one, so a prober cannot list what is there.
func TestFilesDeniedNamesDoNotLeak(t *testing.T) {
	e := newEnv(t)
	p := e.path(SessionScope("proj"))
	refused(t, e, p+"files/secrets/prod.key", "a denied file that exists")
	refused(t, e, p+"files/secrets/missing.key", "a denied file that does not exist")
}

// TestDefaultRedactionIsDiscords: without a Redact option the pages mask
// what every Discord post masks (a registered bot token here).
func TestDefaultRedactionIsDiscords(t *testing.T) {
	const secret = "web-view-test-secret-3f9a1c77"
	redact.AddSecret(secret)
	e := newEnv(t, func(o *Options) { o.Redact = nil })
	write(t, filepath.Join(e.dir, "notes.txt"), "the token is "+secret+"\n")
	write(t, e.transcript, replyLine("m", "I found "+secret))
	p := e.path(SessionScope("proj"))
	for _, target := range []string{p + "files/notes.txt", p} {
		if b := body(t, e.get(t, target)); strings.Contains(b, secret) || !strings.Contains(b, "the token is") && !strings.Contains(b, "I found") {
			t.Errorf("%s shows the secret or lost the text", target)
		}
	}
}

// A symlink to the repository's .git (made by Claude, or in a cloned
// repository) does not open it: a remote's credentials sit in .git/config.
func TestFilesRefuseGitThroughASymlink(t *testing.T) {
	e := newEnv(t)
	p := e.path(SessionScope("proj"))
	if err := os.MkdirAll(filepath.Join(e.dir, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(e.dir, ".git", "config"), "[remote \"origin\"]\n\turl = https://user:GITSECRET@example.com/r.git\n")
	for _, link := range []string{"g", "G2"} {
		target := ".git"
		if link == "G2" {
			target = ".GIT" // case folded, as on macOS
			if err := os.Rename(filepath.Join(e.dir, ".git"), filepath.Join(e.dir, ".GIT")); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(target, filepath.Join(e.dir, link)); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{p + "files/" + link + "/config", p + "files/" + link + "/"} {
			if w := e.get(t, path); w.Code == http.StatusOK || strings.Contains(body(t, w), "GITSECRET") {
				t.Errorf("GET %s = %d, want a refusal", path, w.Code)
			}
		}
	}
	if b := body(t, e.get(t, p+"files/")); strings.Contains(b, `"g/"`) || strings.Contains(b, ">g<") {
		t.Errorf("the listing offers the link to .git: %q", b)
	}
}
