package web

import (
	"bytes"
	"html/template"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// builtBeforeTests is whether the lexer registry existed when the test
// binary finished its package init.
var builtBeforeTests = registryBuilt.Load()

// The highlighter's registry is built by the first highlighted page, not at
// start: internal/web does not link chroma's lexers package (whose init
// parses every lexer, ~5.5 MiB resident in the daemon: BenchmarkDaemonIdleRSS
// and BenchmarkDaemonIdleRSSWebView), and its own registry is empty until
// used.
func TestHighlighterRegistryIsBuiltOnFirstUse(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(strings.Fields(string(out)), "github.com/alecthomas/chroma/v2/lexers") {
		t.Error("internal/web links chroma/v2/lexers, whose init parses all its lexers in every daemon")
	}
	if builtBeforeTests {
		t.Error("the lexer registry was built at init")
	}
	highlightLines("main.go", "package main\n")
	if !registryBuilt.Load() {
		t.Error("highlighting a file did not build the registry")
	}
}

// chromaModuleDir is where the pinned chroma module's source is.
func chromaModuleDir(t *testing.T) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/alecthomas/chroma/v2").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Fatalf("go list chroma: %v", err)
	}
	return string(bytes.TrimSpace(out))
}

// The embedded lexer definitions are chroma's, all of them and unchanged
// (-update copies them from the module after a chroma bump).
func TestLexersAreChromas(t *testing.T) {
	src := filepath.Join(chromaModuleDir(t), "lexers", "embedded")
	theirs, err := filepath.Glob(filepath.Join(src, "*.xml"))
	if err != nil || len(theirs) == 0 {
		t.Fatalf("chroma's lexers: %v", err)
	}
	if *update {
		old, _ := filepath.Glob("lexers/*.xml")
		for _, p := range old {
			_ = os.Remove(p)
		}
		for _, p := range theirs {
			b, err := os.ReadFile(p)
			if err == nil {
				err = os.WriteFile(filepath.Join("lexers", filepath.Base(p)), b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	ours, err := lexerDefs.ReadDir("lexers")
	if err != nil {
		t.Fatal(err)
	}
	if len(ours) != len(theirs) {
		t.Errorf("%d lexer definitions embedded, chroma has %d (go test ./internal/web -run TestLexersAreChromas -update)", len(ours), len(theirs))
	}
	for _, p := range theirs {
		want, _ := os.ReadFile(p)
		got, err := lexerDefs.ReadFile("lexers/" + filepath.Base(p))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("lexers/%s is not chroma's (go test ./internal/web -run TestLexersAreChromas -update)", filepath.Base(p))
		}
	}
}

// chromaGoWritten are the lexers chroma defines (or redefines) in Go that
// the registry does not carry as chroma's registry has them
// (registerGoWritten says why): some are missing, some are there by their
// XML definition alone.
var chromaGoWritten = []string{"Caddyfile", "Caddyfile Directives", "Common Lisp", "dns", "EmacsLisp", "ERB", "Gemtext",
	"Genshi", "Genshi HTML", "Genshi Text", "Haxe", "HTTP", "Markless", "MySQL", "PHTML", "Raku", "reStructuredText",
	"Svelte", "TypoScript", "YAML+Jinja", "Zed"}

// Every other lexer of chroma's registry is in ours, under the same name.
func TestLexerRegistryHasChromasLexers(t *testing.T) {
	for _, l := range lexers.GlobalLexerRegistry.Lexers {
		name := l.Config().Name
		got := registry().Get(name)
		switch {
		case slices.Contains(chromaGoWritten, name):
		case got == nil:
			t.Errorf("no lexer %q", name)
		case got.Config().Name != name:
			t.Errorf("%q is lexer %q", name, got.Config().Name)
		}
	}
	for _, name := range chromaGoWritten {
		if lexers.GlobalLexerRegistry.Get(name) == nil {
			t.Errorf("chroma has no lexer %q any more: take it off chromaGoWritten", name)
		}
	}
}

// Files and code blocks highlight exactly as with chroma's own registry.
func TestHighlightIsChromas(t *testing.T) {
	chromaLines := func(l chroma.Lexer, text string) []template.HTML {
		return highlight(func() chroma.Lexer { return chroma.Coalesce(l) }, text)
	}
	files := map[string]string{
		"main.go":       "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tx := `raw {{.}}`\n\tfmt.Println(x, 0x1f, 'a', len(x))\n}\n",
		"README.md":     "---\ntitle: x\n---\n# Title\n\n* [ ] task with `code`\n\n```go\nfunc f() {}\n```\n\n**bold** and _em_ <!-- c -->\n",
		"index.html":    "<!doctype html>\n<html><script>let a = 1;</script><style>p { color: red }</style></html>\n",
		"app.py":        "def f(x: int) -> str:\n    return f\"{x!r}\"  # c\n",
		"web.ts":        "export const f = async (a: number): Promise<void> => { await g(`t${a}`) }\n",
		"conf.yaml":     "a: 1\nb: [x, 'y']\n# c\n",
		"Makefile":      "all:\n\tgo build ./...\n",
		"Dockerfile":    "FROM debian\nRUN apt-get update\n",
		"run.sh":        "#!/bin/sh\nfor f in *; do echo \"$f\"; done\n",
		"lib.rs":        "fn main() { let v: Vec<u8> = vec![]; println!(\"{}\", v.len()); }\n",
		"page.tmpl":     "{{ range .X }}{{ . }}{{ end }}\n",
		"no-extension":  "#!/usr/bin/env python\nprint(1)\n",
		"config.toml":   "[web]\nlisten = \"off\"\n",
		"style.css":     "a:hover { color: #fff; }\n",
		"q.sql":         "SELECT a FROM t WHERE b = 'x';\n",
		"Main.java":     "class A { public static void main(String[] a) {} }\n",
		"notes.unknown": "just text\n",
	}
	for name, text := range files {
		want := chromaLines(chromaLexerFor(name, text), text)
		if got := highlightLines(name, text); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
	for _, lang := range []string{"go", "golang", "python", "js", "typescript", "bash", "sh", "json", "yaml", "diff", "md", "html", "rust", "toml", "sql", "dockerfile", "go-text-template", "go-html-template"} {
		text := files["main.go"]
		want := chromaLines(lexers.Get(lang), text)
		if got := highlightCode(lang, text); !slices.Equal(got, want) {
			t.Errorf("```%s:\n got %q\nwant %q", lang, got, want)
		}
	}
}

// chromaLexerFor is lexerFor with chroma's own registry.
func chromaLexerFor(name, text string) chroma.Lexer {
	l := lexers.Match(name)
	if l == nil {
		l = lexers.Analyse(text[:min(len(text), 4096)])
	}
	if l == nil {
		l = lexers.Fallback
	}
	return l
}
