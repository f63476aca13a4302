package internal_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every guarantee in docs/SECURITY.md names the tests that prove it; a name
// that no longer exists would leave a guarantee standing with no proof.
// Each table row's last cell reads "`pkg` `TestA`, `TestB`; e2e `TestC`":
// a package (or e2e) followed by the tests it holds.
func TestSecurityDocNamesOnlyTestsThatExist(t *testing.T) {
	doc, err := os.ReadFile("../docs/SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]map[string]bool{} // directory → test functions
	funcs := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark)\w+)\(`)
	testsIn := func(dir string) map[string]bool {
		if m, ok := defined[dir]; ok {
			return m
		}
		m := map[string]bool{}
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, sm := range funcs.FindAllSubmatch(src, -1) {
				m[string(sm[1])] = true
			}
		}
		defined[dir] = m
		return m
	}
	dirOf := func(pkg string) string {
		switch pkg {
		case "e2e":
			return "../e2e"
		case "internal": // the tests of the whole tree (deps, docs)
			return "."
		}
		for _, d := range []string{pkg, filepath.Join("testutil", pkg)} {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				return d
			}
		}
		return ""
	}
	token := regexp.MustCompile("`([^`]+)`|\\be2e\\b")
	named := 0
	for n, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "|") || !strings.Contains(line, "`Test") && !strings.Contains(line, "`Benchmark") {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimSpace(line), "|"), "|")
		proof := cells[len(cells)-1]
		dir := ""
		for _, m := range token.FindAllStringSubmatch(proof, -1) {
			word := m[1]
			if m[0] == "e2e" {
				word = "e2e"
			}
			switch {
			case strings.HasPrefix(word, "Test") || strings.HasPrefix(word, "Benchmark"):
				if dir == "" {
					t.Errorf("SECURITY.md:%d: %s is named before any package", n+1, word)
					continue
				}
				named++
				if !testsIn(dir)[word] {
					t.Errorf("SECURITY.md:%d: %s names %s, which %s does not define", n+1, filepath.Base(dir), word, dir)
				}
			case dirOf(word) != "":
				dir = dirOf(word)
			}
		}
	}
	if named < 100 {
		t.Fatalf("read only %d test names from SECURITY.md; the table format changed?", named)
	}
}
