package internal_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A config edit takes effect without a restart (daemon/reload.go): the
// router, the session manager and the panel read the config they were
// last given (conf(), config(), Current()). The Config their constructors
// took is the one from start-up; code that reads it would quietly keep the
// old settings after a reload, so only the constructors may.
func TestNothingReadsTheStartUpConfigAfterStart(t *testing.T) {
	startUp := regexp.MustCompile(`\bopt\.Config\b|\bp\.Config\b`)
	allowed := map[string]string{
		"router/router.go":     "r.Reconfigure(opt.Config)",
		"session/session.go":   "m.Reconfigure(opt.Config)",
		"panel/reconfigure.go": "return p.Config",
	}
	for _, dir := range []string{"router", "session", "panel", "daemon"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(src), "\n") {
				if want := allowed[filepath.ToSlash(f)]; startUp.MatchString(line) && (want == "" || !strings.Contains(line, want)) {
					t.Errorf("%s:%d reads the start-up config: %s", f, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
}
