package redact

import (
	"strings"
	"testing"
)

// dotenvCorpus is `KEY = value` (spaces around =, as python-dotenv,
// Django settings and INI files allow) in the places a .env line is
// shown: alone, with a trailing comment, exported, quoted, in a diff, in
// Claude's Read output, on a screen under ⎿, in grep output, commented
// out (issue 25 item 6).
var dotenvCorpus = []struct{ name, text, secret string }{
	{"spaces around =", "DEBUG = true\nSECRET_KEY = %s\nALLOWED_HOSTS = *\n", "abc9f8e7d6c5b4a3"},
	{"trailing comment", "SECRET_KEY = %s # production\n", "abc9f8e7d6c5b4a3"},
	{"export with spaces", "export SECRET_KEY = %s", "abc9f8e7d6c5b4a3"},
	{"export quoted", `export SECRET_KEY = "%s"`, "abc9f8e7d6c5b4a3"},
	{"space after =", "SECRET_KEY= %s", "abc9f8e7d6c5b4a3"},
	{"space before =", "SECRET_KEY =%s", "abc9f8e7d6c5b4a3"},
	{"tabs", "SECRET_KEY\t=\t%s", "abc9f8e7d6c5b4a3"},
	{"added in a diff", "@@ -1,2 +1,3 @@\n DEBUG = true\n+SECRET_KEY = %s\n", "abc9f8e7d6c5b4a3"},
	{"removed in a diff", "-SECRET_KEY = %s\n", "abc9f8e7d6c5b4a3"},
	{"Read output", "     1→DEBUG = true\n     2→SECRET_KEY = %s\n", "abc9f8e7d6c5b4a3"},
	{"tool result on screen", "  ⎿  SECRET_KEY = %s\n", "abc9f8e7d6c5b4a3"},
	{"grep output", ".env:2:SECRET_KEY = %s", "abc9f8e7d6c5b4a3"},
	{"commented out", "# SECRET_KEY = %s", "abc9f8e7d6c5b4a3"},
	{"quoted in Markdown", "> SECRET_KEY = %s", "abc9f8e7d6c5b4a3"},
	{"YAML added in a diff", "+  api_token: %s\n", "t0k3n-abcdef123456"},
	{"YAML with a comment", "api_token: %s # rotate monthly\n", "t0k3n-abcdef123456"},
}

func TestDotenvCorpus(t *testing.T) {
	for _, c := range dotenvCorpus {
		text := strings.Replace(c.text, "%s", c.secret, 1)
		got := String(text)
		if strings.Contains(got, c.secret[:len(c.secret)/2]) || strings.Contains(got, c.secret[len(c.secret)/2:]) || !strings.Contains(got, "[redacted ") {
			t.Errorf("%s: not masked: %q", c.name, got)
		}
		if once := String(got); once != got {
			t.Errorf("%s: masking again changed it: %q -> %q", c.name, got, once)
		}
	}
}

// dotenvOrdinary is code and prose near those shapes that must pass
// untouched.
var dotenvOrdinary = []string{
	"+SECRET_KEY = os.environ[\"SECRET_KEY\"]",
	"+    secret_key = settings.secret_key",
	"     4→token = get_token()",
	"# password = ${DB_PASS}",
	"+API_KEY = MY_API_KEY",
	"> the password: is asked at login",
	"-SECRET_KEY = changeme # placeholder",
	"+    token = self.tokenizer.encode(text)",
}

func TestDotenvOrdinaryIsNotMasked(t *testing.T) {
	for _, s := range dotenvOrdinary {
		if got, found := Find(s); got != s {
			t.Errorf("over-masked (%v):\n  in:  %q\n  out: %q", found, s, got)
		}
	}
}
