package chat

import "testing"

func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		"[Delete anyway is safe](https://e.example)": `\[Delete anyway is safe\](https://e.example)`,
		"**big** `code` <@123> @everyone":            "\\*\\*big\\*\\* \\`code\\` \\<\\@123> \\@everyone",
		"two\nlines\u202e\u200bx":                    "two linesx",
		"fix-login #2":                               "fix-login #2",
	} {
		if got := Plain(in); got != want {
			t.Errorf("Plain(%q) = %q, want %q", in, got, want)
		}
	}
}
