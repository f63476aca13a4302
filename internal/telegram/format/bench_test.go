package format

import (
	"strings"
	"testing"
)

// A long reply is split in time linear in its length.
func BenchmarkSplit(b *testing.B) {
	for _, tc := range []struct{ name, in string }{
		{"prose", strings.Repeat("Some **bold** words, `code` and a [link](https://x.test).\n\n", 2000)},
		{"code", "```go\n" + strings.Repeat("x := y + z // <&>\n", 6000) + "```"},
		{"one paragraph", strings.Repeat("word ", 20000)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.in)))
			for b.Loop() {
				Split(tc.in)
			}
		})
	}
}
