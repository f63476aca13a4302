// Package policy matches tool calls against permission rules written in
// Claude Code's permission-rule syntax: `Bash`, `Bash(git push *)`,
// `Bash(npm run test:*)`, `Edit`, `Edit(src/**)`, `Write(.env*)`,
// `Read(~/.ssh/**)`, `WebFetch(domain:example.com)`, `mcp__server`,
// `mcp__server__tool`. The PreToolUse hook uses it to enforce a project's
// [policy]: ask rules always raise a card, deny rules refuse. It is a leaf
// package (no internal imports), so the hook binary stays small.
package policy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Rule is one parsed rule.
type Rule struct {
	Text string // as written
	Tool string
	Spec string // inside the parentheses; "" matches every call
	has  bool   // parentheses were written
}

// Parse parses one rule.
func Parse(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	r := Rule{Text: s, Tool: s}
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return r, fmt.Errorf("rule %q: missing closing parenthesis", s)
		}
		r.Tool, r.Spec, r.has = s[:i], s[i+1:len(s)-1], true
	}
	if r.Tool == "" || strings.ContainsAny(r.Tool, " ()") || (strings.Contains(r.Tool, "*") && !strings.HasPrefix(r.Tool, "mcp__")) {
		return r, fmt.Errorf("rule %q: expected Tool or Tool(specifier)", s)
	}
	if r.has && r.Spec == "" {
		return r, fmt.Errorf("rule %q: empty specifier; write %s alone to match every call", s, r.Tool)
	}
	return r, nil
}

// Set is a project's rules, parsed.
type Set struct {
	Ask, Deny []Rule
}

// New parses ask and deny rules; rules that do not parse are returned as
// an error and left out (the config check reports them before this runs).
func New(ask, deny []string) (Set, error) {
	var s Set
	var errs []string
	for _, t := range ask {
		r, err := Parse(t)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		s.Ask = append(s.Ask, r)
	}
	for _, t := range deny {
		r, err := Parse(t)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		s.Deny = append(s.Deny, r)
	}
	if len(errs) > 0 {
		return s, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return s, nil
}

// Call is a tool call as PreToolUse shows it.
type Call struct {
	Tool  string
	Input json.RawMessage
	Cwd   string // the session's directory: relative patterns start here
	Home  string
	// fields is Input decoded, once per Check rather than once per rule.
	fields map[string]any
}

// decoded returns the call's input fields.
func (c Call) decoded() map[string]any {
	if c.fields != nil {
		return c.fields
	}
	in := map[string]any{}
	_ = json.Unmarshal(c.Input, &in)
	return in
}

// Verdict of a call under a Set.
type Verdict struct {
	Decision string // "deny", "ask" or "" (no rule matched)
	Rule     string // the rule that decided, as written
}

// Check returns the verdict for a call: deny rules first, then ask rules.
func (s Set) Check(c Call) Verdict {
	c.fields = c.decoded()
	for _, r := range s.Deny {
		if r.Match(c) {
			return Verdict{Decision: "deny", Rule: r.Text}
		}
	}
	for _, r := range s.Ask {
		if r.Match(c) {
			return Verdict{Decision: "ask", Rule: r.Text}
		}
	}
	return Verdict{}
}

// editTools are the tools an Edit rule covers (Claude Code applies Edit
// rules to every built-in tool that edits files); readTools, a Read rule.
var (
	editTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}
	readTools = []string{"Read", "Grep", "Glob", "LS", "NotebookRead"}
)

// Match reports whether the rule covers the call.
func (r Rule) Match(c Call) bool {
	if !r.toolMatches(c.Tool) {
		return false
	}
	if !r.has {
		return true
	}
	in := c.decoded()
	str := func(k string) string { v, _ := in[k].(string); return v }
	switch {
	case c.Tool == "Bash":
		return matchCommand(r.Spec, str("command"))
	case c.Tool == "WebFetch" && strings.HasPrefix(r.Spec, "domain:"):
		u, err := url.Parse(str("url"))
		if err != nil {
			return false
		}
		d := strings.TrimPrefix(r.Spec, "domain:")
		h := u.Hostname()
		return h == d || strings.HasSuffix(h, "."+d)
	}
	for _, k := range []string{"file_path", "notebook_path", "path"} {
		if p := str(k); p != "" {
			return matchPath(r.Spec, p, c.Cwd, c.Home)
		}
	}
	return false
}

func (r Rule) toolMatches(tool string) bool {
	switch {
	case r.Tool == tool:
		return true
	case r.Tool == "Edit" && slices.Contains(editTools, tool), r.Tool == "Read" && slices.Contains(readTools, tool):
		return true
	case strings.HasPrefix(r.Tool, "mcp__") && !r.has:
		// mcp__server covers every tool of that server; mcp__server__*
		// is the same.
		prefix := strings.TrimSuffix(r.Tool, "*")
		prefix = strings.TrimSuffix(prefix, "__")
		return strings.HasPrefix(tool, prefix+"__")
	}
	return false
}

// matchCommand matches a Bash specifier against a command and against each
// of its subcommands (split at &&, ||, ;, | and newlines), so that a rule
// for `git push *` also holds for `cd repo && git push`. `*` matches any
// text; a trailing ` *` (or the legacy `:*`) also matches the bare
// command.
func matchCommand(spec, cmd string) bool {
	spec = strings.TrimSpace(spec)
	if strings.HasSuffix(spec, ":*") {
		spec = strings.TrimSuffix(spec, ":*") + " *"
	}
	for _, sub := range append([]string{cmd}, subcommands(cmd)...) {
		sub = strings.Join(strings.Fields(sub), " ")
		if sub == "" {
			continue
		}
		if glob(spec, sub) || (strings.HasSuffix(spec, " *") && sub == strings.TrimSuffix(spec, " *")) {
			return true
		}
	}
	return false
}

// subcommands splits a shell command at its control operators. It does not
// parse quotes: a split inside a quoted string only adds candidates, which
// can make a rule match more often, never less.
func subcommands(cmd string) []string {
	f := func(r rune) bool {
		return r == ';' || r == '|' || r == '&' || r == '\n' || r == '(' || r == ')' || r == '`'
	}
	parts := strings.FieldsFunc(cmd, f)
	// A leading "sudo", "env X=1" or "time" still runs the command after it.
	var out []string
	for _, p := range parts {
		out = append(out, p)
		w := strings.Fields(p)
		for len(w) > 0 && (w[0] == "sudo" || w[0] == "time" || w[0] == "env" || w[0] == "nohup" || w[0] == "exec" || strings.Contains(w[0], "=")) {
			w = w[1:]
			out = append(out, strings.Join(w, " "))
		}
	}
	return out
}

// glob matches s against a pattern whose only wildcard is * (any text).
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i := 1; i < len(parts)-1; i++ {
		j := strings.Index(s, parts[i])
		if j < 0 {
			return false
		}
		s = s[j+len(parts[i]):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// matchPath matches a gitignore-style file pattern: `//abs/path`, `~/p`,
// `/p` (from the project root), `./p` or `dir/p` (from the session's
// directory), or a pattern without a slash, which matches the file's name
// in any directory. `**` matches any number of directories.
func matchPath(pattern, file, cwd, home string) bool {
	if !filepath.IsAbs(file) {
		file = filepath.Join(cwd, file)
	}
	file = filepath.Clean(file)
	var full string
	switch {
	case strings.HasPrefix(pattern, "//"):
		full = pattern[1:]
	case strings.HasPrefix(pattern, "~/") && home != "":
		full = filepath.Join(home, pattern[2:])
	case strings.HasPrefix(pattern, "/"):
		full = filepath.Join(cwd, pattern)
	case strings.HasPrefix(pattern, "./"):
		full = filepath.Join(cwd, pattern[2:])
	case !strings.Contains(strings.TrimSuffix(pattern, "/**"), "/"):
		if strings.HasSuffix(pattern, "/**") {
			// dir/** anywhere: any file under a directory of that name.
			dir := strings.TrimSuffix(pattern, "/**")
			for d := filepath.Dir(file); d != "/" && d != "."; d = filepath.Dir(d) {
				if ok, _ := path.Match(dir, filepath.Base(d)); ok {
					return true
				}
			}
			return false
		}
		ok, _ := path.Match(pattern, filepath.Base(file))
		return ok
	default:
		full = filepath.Join(cwd, pattern)
	}
	if strings.HasSuffix(pattern, "/") {
		full += "/**"
	}
	return matchSegments(strings.Split(strings.Trim(full, "/"), "/"), strings.Split(strings.Trim(file, "/"), "/"))
}

// matchSegments matches path segments, ** standing for zero or more.
func matchSegments(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegments(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], segs[0]); !ok {
		return false
	}
	return matchSegments(pat[1:], segs[1:])
}
