package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

const samplePatch = `diff --git a/main.go b/main.go
index 1111111..2222222 100644
--- a/main.go
+++ b/main.go
@@ -1,4 +1,4 @@
 package main
 
-func old() {}
+func fresh() { token := "hunter2hunter2" }
 // end
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..3333333
Binary files /dev/null and b/logo.png differ
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 4444444..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
`

func bigPatch(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,%d @@\n", n)
	for i := range n {
		fmt.Fprintf(&b, "+line %d\n", i)
	}
	return b.String()
}

func TestDiffShowsChangedLines(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Diffs = fakeDiffs{d: Diff{Patch: samplePatch + bigPatch(foldLines+1), Head: "abcdef0123456789abcdef", Merge: "abcdef0123456789abcdef"}}
	})
	w := e.get(t, e.path(SessionScope("proj"))+"diff")
	b := body(t, w)
	if w.Code != http.StatusOK {
		t.Fatalf("diff = %d", w.Code)
	}
	for _, want := range []string{
		`<tr class="del"><td class="ln">3</td><td class="ln"></td><td class="code"><span class="kd">func</span>`,
		`<tr class="add"><td class="ln"></td><td class="ln">3</td><td class="code"><span class="kd">func</span>`,
		"fresh",
		"[redacted]",
		"“Merge this” lands commit <code>abcdef012345</code>",
		"logo.png (binary)",
		"Binary file, not shown.",
		`<summary>gone.txt</summary>`,
		"<details class=\"file\">\n<summary>big.txt — 401 lines changed, folded</summary>",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("diff page lacks %q", want)
		}
	}
	if strings.Contains(b, "hunter2hunter2") {
		t.Error("the diff page holds a secret")
	}
}

func TestDiffUncommittedNamesNoMerge(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Diffs = fakeDiffs{d: Diff{Patch: samplePatch, Head: "abcdef0123456789", Uncommitted: true}}
	})
	b := body(t, e.get(t, e.path(SessionScope("proj"))+"diff"))
	if strings.Contains(b, "Merge this” lands") || !strings.Contains(b, "Uncommitted changes on <code>abcdef012345</code>") {
		t.Errorf("uncommitted diff: %q", b)
	}
}

func TestParsePatchRename(t *testing.T) {
	files := parsePatch("diff --git a/old name.go b/new name.go\nsimilarity index 90%\nrename from old name.go\nrename to new name.go\n")
	if len(files) != 1 || files[0].Name != "new name.go" || files[0].From != "old name.go" || files[0].Status != "renamed" {
		t.Fatalf("rename = %+v", files)
	}
}

func TestDiffSideBySide(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Diffs = fakeDiffs{d: Diff{Patch: samplePatch, Head: "abcdef0123456789", Merge: "abcdef0123456789"}}
	})
	b := body(t, e.get(t, e.path(SessionScope("proj"))+"diff?view=split"))
	// The removed and the added line face each other on one row.
	want := `<tr><td class="ln">3</td><td class="code del"><span class="kd">func</span><span class="w"> </span><span class="nf">old</span>`
	if !strings.Contains(b, want) {
		t.Fatalf("split view lacks %q: %q", want, b)
	}
	row := b[strings.Index(b, want):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, `<td class="ln">3</td><td class="code add"><span class="kd">func</span><span class="w"> </span><span class="nf">fresh</span>`) {
		t.Errorf("the added line is not beside the removed one: %q", row)
	}
	if !strings.Contains(b, `href="diff">Unified</a>`) {
		t.Error("no way back to the unified view")
	}
}

func TestSplitRows(t *testing.T) {
	l := func(kind string) diffLine { return diffLine{Kind: kind, content: kind} }
	rows := splitRows([]diffLine{l("hunk"), l("ctx"), l("del"), l("del"), l("add"), l("ctx"), l("add"), l("note")})
	var got []string
	for _, r := range rows {
		s := ""
		if r.Full != nil {
			s = r.Full.Kind
		} else {
			for _, x := range []*diffLine{r.L, r.R} {
				if x == nil {
					s += "_"
				} else {
					s += x.Kind[:1]
				}
			}
		}
		got = append(got, s)
	}
	if want := "hunk cc da d_ cc _a note"; strings.Join(got, " ") != want {
		t.Fatalf("rows = %q, want %q", strings.Join(got, " "), want)
	}
}
