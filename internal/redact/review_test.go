package redact

import (
	"strings"
	"testing"
)

// reviewCorpus holds the shapes security-2.md finding 9 found unmasked:
// each line with its (fake) secret.
var reviewCorpus = []struct{ name, text, secret string }{
	{"AWS credentials file", "[default]\naws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE\naws_secret_access_key = %s\n", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"key = value", "SECRET_KEY = %s", "abc9f8e7d6c5b4a3"},
	{"pypirc", "[pypi]\nusername = __token__\npassword = %s\n", "pypi-AgEIcHlwaS5vcmcCJGE4ZjY5" + rep("Xy12", 40)},
	{"DB_PASS", "DB_PASS=%s", "Sup3rS3cret"},
	{"PGPASSWORD", "PGPASSWORD=%s psql -h db", "pg-s3cret-99"},
	{"MYSQL_PWD", "export MYSQL_PWD=%s", "my5ql-Pw"},
	{"mysql -p", "mysql -u root -p%s mydb", "r00tPassw0rd"},
	{"Bearer", `curl -H "Authorization: Bearer %s" https://api.example.com`, "opaque0123456789abcdefXYZ"},
	{"X-Api-Key", `curl -H 'X-Api-Key: %s' https://api.example.com`, "k3y-0123456789abcdef"},
	{"X-Api-Key in JSON", `{"headers": {"X-Api-Key": "%s"}}`, "k3y-0123456789abcdef"},
	{"Slack app token", "SLACK_APP %s", "xapp-1-A0123456789-1234567890123-" + rep("abcdef0123", 64)},
	{"Hugging Face", "hf token %s", "hf_" + rep("AbCdEfGhIjKlMnOp", 34)},
	{"Google OAuth", "access %s", "ya29." + rep("a0AfH6SMB-xyz_", 120)},
	{"SendGrid", "sendgrid %s", "SG." + rep("aBcDeFgHiJ", 22) + "." + rep("kLmNoPqRsT1-_", 43)},
	{"Azure", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=%s;EndpointSuffix=core.windows.net", rep("Zm9vYmFy", 86) + "=="},
	{"upper-case value", "API_KEY=%s", "ABCDEF0123456789ABCDEF0123"},
	{"value with $", "DB_PASSWORD=%s", "pa$$w0rd-x"},
}

func TestReviewCorpus(t *testing.T) {
	for _, c := range reviewCorpus {
		text := strings.Replace(c.text, "%s", c.secret, 1)
		got := String(text)
		if strings.Contains(got, c.secret) || !strings.Contains(got, "[redacted ") {
			t.Errorf("%s: not masked: %q", c.name, got)
		}
		// No more than a few characters of the secret are left.
		for _, part := range []string{c.secret[:len(c.secret)/2], c.secret[len(c.secret)/2:]} {
			if strings.Contains(got, part) {
				t.Errorf("%s: half of the secret is left: %q", c.name, got)
			}
		}
		if once := String(got); once != got {
			t.Errorf("%s: masking again changed it: %q -> %q", c.name, got, once)
		}
	}
}

// reviewOrdinary is text near the new rules that must pass untouched.
var reviewOrdinary = []string{
	"Bearer tokens are short-lived; send them as Authorization: Bearer $TOKEN",
	"curl -H 'X-Request-Id: 1234abcd5678' -H \"X-Api-Key: ${API_KEY}\" https://x",
	"mysql -u root -p mydb",
	"PGPASSWORD=$PGPASS psql -h db",
	"password = ${DB_PASS}",
	"token = get_token()",
	"API_KEY=MY_API_KEY",
	"from huggingface_hub import hf_hub_download",
	"SG.Foo is not a key, nor is AccountKey=<your key>",
	"bypass=enabled and BYPASS_MODE=1",
}

func TestReviewOrdinaryIsNotMasked(t *testing.T) {
	for _, s := range reviewOrdinary {
		if got, found := Find(s); got != s {
			t.Errorf("over-masked (%v):\n  in:  %q\n  out: %q", found, s, got)
		}
	}
}

// A 2,000-character reply that holds several of the review's secrets among
// ordinary text costs as little as one without (issue 19: under 0.2 ms).
func BenchmarkRedact2000Corpus(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 2000; i++ {
		c := reviewCorpus[i%len(reviewCorpus)]
		sb.WriteString("Next I ran the deploy script and checked the output of the build.\n")
		if i%3 == 0 {
			sb.WriteString(strings.Replace(c.text, "%s", c.secret, 1) + "\n")
		}
	}
	msg := sb.String()[:2000]
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		String(msg)
	}
}
