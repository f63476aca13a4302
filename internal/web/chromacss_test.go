package web

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"
)

var update = flag.Bool("update", false, "rewrite assets/chroma.css from chroma's styles")

// generatedCSS is the highlighter's stylesheet: GitHub's colours, and
// GitHub Dark's when the system asks for dark mode.
func generatedCSS() []byte {
	f := chromahtml.New(chromahtml.WithClasses(true))
	var b bytes.Buffer
	_ = f.WriteCSS(&b, styles.Get("github"))
	b.WriteString("@media (prefers-color-scheme: dark) {\n")
	_ = f.WriteCSS(&b, styles.Get("github-dark"))
	b.WriteString("}\n")
	return b.Bytes()
}

// The stylesheet is chroma's, kept as an asset (-update rewrites it), so
// the daemon does not link chroma's style registry for two styles: it
// parses every style at start, some 3 MiB of resident memory for as long
// as the daemon runs (BenchmarkDaemonIdleRSSWebView).
func TestChromaCSSIsChromas(t *testing.T) {
	want := generatedCSS()
	if *update {
		if err := os.WriteFile("assets/chroma.css", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := assetFS.ReadFile("assets/chroma.css")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("assets/chroma.css is not chroma's stylesheet (go test ./internal/web -run TestChromaCSSIsChromas -update): %v", err)
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range strings.Fields(string(out)) {
		if strings.HasPrefix(d, "github.com/alecthomas/chroma/v2/styles") || strings.HasPrefix(d, "github.com/alecthomas/chroma/v2/formatters") {
			t.Errorf("internal/web links %s", d)
		}
	}
}
