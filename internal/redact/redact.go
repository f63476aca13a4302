// Package redact masks secrets in text before ccbridge posts it to Discord:
// known token formats (Anthropic, OpenAI, GitHub, GitLab, Slack, Discord,
// AWS, Google, Stripe, JWTs), private key blocks, password=/secret=-style
// assignments, and exact secrets the caller names (the config's bot
// tokens). It is a leaf: it imports no other internal package, so the
// hooks and the daemon share it.
package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// rule is one secret format. hint, when set, is a substring (lower case
// when fold) that every match contains: texts without it skip the regexp,
// which keeps ordinary messages cheap.
type rule struct {
	name string
	hint []string
	fold bool
	pat  string
	re   *regexp.Regexp // compiled from pat on first use
	// pre replaces hint when a substring cannot say it.
	pre func(string) bool
	// block rules may span lines (private keys); the others run line by
	// line.
	block bool
	// keyed rules are anchored regexps tried where a keyStarts word
	// begins; lineKey ones only where that word starts the line's first
	// token.
	keyed, lineKey bool
	// notCode keyed rules skip values that read as code (an identifier:
	// self.api_key = api_key), since their shape is also an assignment's.
	notCode bool
	// group is the submatch that holds the secret (0: the whole match);
	// the rest of the match (a key name, quotes) stays readable.
	group int
}

// Mask is what a secret is replaced with; the rule's name follows it.
func mask(name string) string { return "[redacted " + name + "]" }

var rules = []rule{
	{name: "private key", hint: []string{"PRIVATE KEY"}, block: true,
		pat: (`-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)`)},
	{name: "Anthropic key", hint: []string{"sk-ant-"}, pat: (`sk-ant-[A-Za-z0-9]{2,10}-[A-Za-z0-9_-]{20,}`)},
	{name: "OpenAI key", hint: []string{"sk-"},
		pat: (`\bsk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{32,})`)},
	{name: "GitHub token", hint: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		pat: (`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`)},
	{name: "GitLab token", hint: []string{"gl"},
		pat: (`\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas)-[A-Za-z0-9_-]{20,}`)},
	{name: "Slack token", hint: []string{"xox", "xapp-", "hooks.slack.com"},
		pat: (`\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]+`)},
	{name: "Discord webhook", hint: []string{"/api/webhooks/"},
		pat: (`https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+`)},
	{name: "Discord token", pre: tokenDot,
		pat: (`\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b`)},
	{name: "Telegram bot token", hint: []string{":AA"}, pat: (`\b[0-9]{6,12}:AA[A-Za-z0-9_-]{30,40}\b`)},
	{name: "AWS access key", hint: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
		pat: (`\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b`)},
	{name: "Google API key", hint: []string{"AIza"}, pat: (`\bAIza[0-9A-Za-z_-]{35}`)},
	{name: "Stripe key", hint: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"},
		pat: (`\b(?:[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})`)},
	{name: "Hugging Face token", hint: []string{"hf_"}, pat: (`\bhf_[A-Za-z0-9]{30,}`)},
	{name: "Google OAuth token", hint: []string{"ya29."}, pat: (`\bya29\.[A-Za-z0-9_-]{20,}`)},
	{name: "SendGrid key", hint: []string{"SG."}, pat: (`\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}`)},
	{name: "Azure key", hint: []string{"AccountKey=", "SharedAccessKey="}, group: 1,
		pat: (`(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})`)},
	{name: "JWT", hint: []string{"eyJ"},
		pat: (`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`)},
	// key = "literal" and key: 'literal' in any language or config file.
	{name: "secret", keyed: true, group: 2,
		pat: (`^(` + assignKeys + keySuffix + `["']?[ \t]*(?::=|=>|[:=])[ \t]*)["']([^"'\s<>{}]{4,})["']`)},
	// KEY=value (no spaces: env files, shell, URLs' query strings, flags).
	{name: "secret", keyed: true, group: 2,
		pat: (`^(` + assignKeys + keySuffix + `=)([^\s"'<>{}()&;,~]{4,})`)},
	// key: value, alone on a line (YAML).
	{name: "secret", keyed: true, lineKey: true, group: 2,
		pat: (`^(` + assignKeys + keySuffix + `:[ \t]+)([^\s"'$<>{}()\[\]#;,]{8,})` + lineEnd)},
	// key = value, unquoted, alone on a line: INI files such as
	// ~/.aws/credentials and .pypirc, .env files written with spaces.
	{name: "secret", keyed: true, lineKey: true, group: 2, notCode: true,
		pat: (`^(` + assignKeys + keySuffix + `[ \t]*=[ \t]*)([^\s"'<>{}()\[\];,]{4,})` + lineEnd)},
	// Authorization: Bearer <token> (or Basic), in curl lines and logs.
	{name: "token", fold: true, hint: []string{"bearer", "basic"}, group: 1,
		pat: (`(?i:\bbearer[ \t]+|\bauthorization:[ \t]*basic[ \t]+)([A-Za-z0-9._~+/-]{16,}=*)`)},
	// X-Api-Key: …, X-Auth-Token: … and the like.
	{name: "token", fold: true, hint: []string{"x-"}, group: 1,
		pat: (`(?i:\bx-[a-z0-9-]*(?:key|token|secret|auth)[a-z0-9-]*)["']?:[ \t]*["']?([^\s"'<>{}]{8,})`)},
	// mysql -p<password> (the password glued to the flag).
	{name: "password", hint: []string{"mysql"}, group: 1,
		pat: (`\bmysql(?:dump|admin|sh)?\b[^\n|;&]*?[ \t]-p([^\s"'$;&|<>]{3,})`)},
	// URL credentials: scheme://user:password@host.
	{name: "password", hint: []string{"://"}, group: 1,
		pat: (`\b[a-z][a-z0-9+.-]*://[^\s:/@]+:([^\s:/@]{3,})@`)},
}

// lineEnd ends a line-alone value: blanks, a # comment (.env, YAML,
// INI), the line break.
const lineEnd = `[ \t]*(?:[ \t]#[^\n]*)?\r?\n?$`

// keySuffix is the rest of a key name after its keyword: more words
// after _ or -, or camelCase ones (secretKey), but not letters that make
// another word (tokenizer).
const keySuffix = `(?:[_.-][A-Za-z0-9]+|[A-Z][A-Za-z0-9]*)*`

const assignKeys = `(?i:password|passwd|passphrase|pass|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret|auth)`

// keyStarts are the first letters of every assignKeys word, lower case.
var keyStarts = []string{"pass", "pwd", "secret", "token", "api", "access", "private", "client", "auth"}

// upperKeys may start inside an upper-case word: PGPASSWORD, MYSQLPASSWD.
var upperKeys = []string{"PASSWORD", "PASSWD"}

// notSecret are values that an assignment rule matches in ordinary code or
// docs and that are never real secrets.
var notSecret = []string{"true", "false", "null", "none", "nil", "string", "required", "optional", "undefined",
	"changeme", "example", "password", "redacted", "xxxx", "xxxxxxxx", "********"}

var (
	mu    sync.RWMutex
	exact []string // longest first
)

// AddSecret registers a value that must never be posted as is (a bot
// token). Values shorter than 8 characters are ignored: masking them would
// mangle ordinary words.
func AddSecret(v string) {
	v = strings.TrimSpace(v)
	if len(v) < 8 {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(exact, v) {
		return
	}
	exact = append(exact, v)
	slices.SortFunc(exact, func(a, b string) int { return len(b) - len(a) })
}

// String returns s with every secret masked.
func String(s string) string {
	out, _ := Find(s)
	return out
}

// Find returns s with every secret masked and the names of the rules that
// matched (empty when s holds no secret).
func Find(s string) (string, []string) {
	if off.Load() {
		return s, nil
	}
	compileOnce.Do(compile)
	var found []string
	mu.RLock()
	for _, v := range exact {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, mask("bot token"))
			found = append(found, "bot token")
		}
	}
	mu.RUnlock()
	for i := range rules {
		r := &rules[i]
		var n string
		if r.block {
			if !r.applies(s) {
				continue
			}
			n = r.replace(s)
		} else {
			n = r.perLine(s)
		}
		if n != s {
			s = n
			if !slices.Contains(found, r.name) {
				found = append(found, r.name)
			}
		}
	}
	return s, found
}

// applies is the cheap test that lets most text skip the regexp.
func (r *rule) applies(s string) bool {
	if r.pre != nil {
		return r.pre(s)
	}
	if len(r.hint) == 0 {
		return true
	}
	if r.fold {
		return containsAnyFold(s, r.hint)
	}
	return containsAny(s, r.hint)
}

// keyedSpans finds the secrets of a keyed rule in one line.
func (r *rule) keyedSpans(line string) []span {
	var out []span
	for i := 0; i < len(line); i++ {
		if !startsKey(line, i) {
			continue
		}
		if !assigns(line[i:]) || r.lineKey && !firstToken(line[:i]) {
			continue
		}
		m := r.re.FindStringSubmatchIndex(line[i:])
		if m == nil {
			continue
		}
		ka, kz := i+m[2], i+m[3]
		a, z := i+m[2*r.group], i+m[2*r.group+1]
		if secretValue(line[ka:kz], line[a:z]) && !(r.notCode && identifier(line[a:z])) {
			out = append(out, span{a, z})
		}
		i = z - 1
	}
	return out
}

// startsKey reports whether a keyStarts word begins at s[i], not in the
// middle of a word's letters (pass in bypass is not a key; db_password is).
func startsKey(s string, i int) bool {
	switch s[i] | 0x20 { // the first letters of keyStarts
	case 'p', 's', 't', 'a', 'c':
	default:
		return false
	}
	if i > 0 {
		if c := s[i-1] | 0x20; c >= 'a' && c <= 'z' {
			if s[i-1] >= 'A' && s[i-1] <= 'Z' && s[i] >= 'A' && s[i] <= 'Z' {
				return slices.ContainsFunc(upperKeys, func(k string) bool { return strings.HasPrefix(s[i:], k) })
			}
			if !(s[i] >= 'A' && s[i] <= 'Z') {
				return false // inside a lower-case word; camelCase starts are fine
			}
		}
	}
	for _, k := range keyStarts {
		if len(s)-i >= len(k) && s[i]|0x20 == k[0] && strings.EqualFold(s[i:i+len(k)], k) {
			return true
		}
	}
	return false
}

// assigns is the cheap test every keyed rule's match passes: the key's
// name characters, a quote, blanks, then : or =. Most words that start
// like a key (token_file is checked) fail it without a regexp.
func assigns(s string) bool {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] == '.' || s[i] == '-' || s[i] >= '0' && s[i] <= '9' || (s[i]|0x20) >= 'a' && (s[i]|0x20) <= 'z') {
		i++
	}
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i < len(s) && (s[i] == ':' || s[i] == '=')
}

// firstToken reports whether prefix (the line before a key) is
// indentation and name characters only, after what commonly leads a line
// that shows a file's: a diff's +, a comment's # or //, a quote's >,
// Claude's Read numbering (3→) and tool result (⎿), grep's file:line:.
func firstToken(prefix string) bool {
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		if !(c == ' ' || c == '\t' || c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || (c|0x20) >= 'a' && (c|0x20) <= 'z' ||
			c == '+' || c == '#' || c == '/' || c == '>' || c == ':' || c >= 0x80) {
			return false
		}
	}
	return true
}

// secretValue tells a secret from what assignment rules also match in
// ordinary code and docs: placeholders, environment variable names, keys
// that name a file or a variable rather than hold the secret.
func secretValue(key, val string) bool {
	if slices.Contains(notSecret, strings.ToLower(val)) || strings.HasPrefix(val, "[redacted") || strings.HasPrefix(val, "$") {
		return false
	}
	k := strings.ToLower(strings.TrimRight(key, " \t:=>\"'"))
	for _, suf := range []string{"env", "file", "path", "name", "id", "type", "url", "len", "length", "count", "size"} {
		if strings.HasSuffix(k, suf) {
			return false
		}
	}
	return !envName(val)
}

// identifier reports whether val is a (dotted) name with no digit, as a
// variable in code is.
func identifier(val string) bool {
	for i := 0; i < len(val); i++ {
		if c := val[i] | 0x20; !(c >= 'a' && c <= 'z' || val[i] == '_' || val[i] == '.') {
			return false
		}
	}
	return true
}

// envName reports whether val reads as the name of an environment
// variable (token=GITHUB_TOKEN) rather than an upper-case secret: upper
// case, starting with a letter, and words joined by _ or no digits at all.
func envName(val string) bool {
	if val == "" || !(val[0] >= 'A' && val[0] <= 'Z') {
		return false
	}
	digits, under := false, false
	for i := 0; i < len(val); i++ {
		switch c := val[i]; {
		case c >= '0' && c <= '9':
			digits = true
		case c == '_':
			under = true
		case !(c >= 'A' && c <= 'Z'):
			return false
		}
	}
	return under || !digits
}

func (r *rule) replace(s string) string { return maskSpans(s, r.spans(s), r.name) }

// span is the byte range [a, z) of a secret.
type span struct{ a, z int }

// spans finds the secrets of a rule in s.
func (r *rule) spans(s string) []span {
	if r.keyed {
		return r.keyedSpans(s)
	}
	var out []span
	for _, m := range r.re.FindAllStringSubmatchIndex(s, -1) {
		a, z := m[2*r.group], m[2*r.group+1]
		if a < 0 || r.group > 0 && (slices.Contains(notSecret, strings.ToLower(s[a:z])) || strings.HasPrefix(s[a:z], "[redacted")) {
			continue
		}
		out = append(out, span{a, z})
	}
	return out
}

// maskSpans replaces each span of s (in order, not overlapping) with the
// mask of name.
func maskSpans(s string, spans []span, name string) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.a])
		b.WriteString(mask(name))
		last = sp.z
	}
	b.WriteString(s[last:])
	return b.String()
}

// perLine applies a rule to each line that passes its cheap test: secrets
// of these formats never span lines, and the regexps cost in proportion
// to the text they scan.
func (r *rule) perLine(s string) string {
	var b strings.Builder
	changed := false
	rest := s
	for len(rest) > 0 {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		if r.applies(line) {
			if n := r.replace(line); n != line {
				if !changed {
					b.Grow(len(s))
					b.WriteString(s[:len(s)-len(rest)-len(line)])
					changed = true
				}
				b.WriteString(n)
				continue
			}
		}
		if changed {
			b.WriteString(line)
		}
	}
	if !changed {
		return s
	}
	return b.String()
}

// containsAnyFold is containsAny for lower-case subs, ignoring the case of s
// (ASCII), without allocating.
func containsAnyFold(s string, subs []string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		for _, x := range subs {
			if c == x[0] && len(s)-i >= len(x) && strings.EqualFold(s[i:i+len(x)], x) {
				return true
			}
		}
	}
	return false
}

// tokenDot reports whether s has a run of at least 20 token characters
// followed by a dot: the shape of a Discord token's first part.
func tokenDot(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			run++
		case c == '.' && run >= 20:
			return true
		default:
			run = 0
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// The regexps are compiled on first use, not at init: the hook binaries
// import this package, and most of their runs post nothing.
var compileOnce sync.Once

func compile() {
	for i := range rules {
		rules[i].re = regexp.MustCompile(rules[i].pat)
	}
}

var off atomic.Bool

// SetEnabled turns redaction on (the default) or off ([policy] redact =
// false in the config).
func SetEnabled(on bool) { off.Store(!on) }

// Enabled reports whether redaction is on.
func Enabled() bool { return !off.Load() }
