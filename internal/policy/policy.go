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
	memo   *memo
}

// memo is what a Check works out once for all its rules.
type memo struct {
	cmds   []simple
	cmdsOK bool
	parsed bool
	real   map[string]string // path → with its symlinks resolved
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
	// Unsure is set on an "ask" given because the call could not be
	// judged against Rule (a command run through sh -c "$X", xargs, a
	// nested claude…): a person decides rather than the rule be dodged.
	Unsure bool
}

// Check returns the verdict for a call: deny rules first, then ask rules,
// then ask when a rule could not be judged.
func (s Set) Check(c Call) Verdict {
	c.fields = c.decoded()
	c.memo = &memo{real: map[string]string{}}
	var unsureRule string
	for _, list := range []struct {
		rules    []Rule
		decision string
	}{{s.Deny, "deny"}, {s.Ask, "ask"}} {
		for _, r := range list.rules {
			switch r.judge(c) {
			case yes:
				return Verdict{Decision: list.decision, Rule: r.Text}
			case unsure:
				if unsureRule == "" {
					unsureRule = r.Text
				}
			}
		}
	}
	if unsureRule == "" && c.Tool == "Bash" && c.runsClaude() {
		// A Claude started from the shell has none of this session's
		// settings: nothing of the policy would hold inside it.
		for _, r := range append(slices.Clone(s.Deny), s.Ask...) {
			unsureRule = r.Text
			break
		}
	}
	if unsureRule != "" {
		return Verdict{Decision: "ask", Rule: unsureRule, Unsure: true}
	}
	return Verdict{}
}

// editTools are the tools an Edit rule covers (Claude Code applies Edit
// rules to every built-in tool that edits files); readTools, a Read rule.
var (
	editTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}
	readTools = []string{"Read", "Grep", "Glob", "LS", "NotebookRead"}
)

// outcome of judging a rule against a call.
type outcome int

const (
	no     outcome = iota
	yes            // the rule covers the call
	unsure         // the call hides what it does from the rule
)

func (c Call) str(k string) string { v, _ := c.decoded()[k].(string); return v }

// Match reports whether the rule covers the call.
func (r Rule) Match(c Call) bool { return r.judge(c) == yes }

func (r Rule) judge(c Call) outcome {
	if c.Tool == "Bash" && r.has && (r.Tool == "Read" || r.Tool == "Edit") {
		// Read and Edit rules hold for the files a command names too.
		return r.judgeShellPaths(c)
	}
	if !r.toolMatches(c.Tool) {
		return no
	}
	if !r.has {
		return yes
	}
	switch {
	case c.Tool == "Bash":
		return c.judgeCommand(r.Spec)
	case c.Tool == "WebFetch" && strings.HasPrefix(r.Spec, "domain:"):
		u, err := url.Parse(c.str("url"))
		if err != nil {
			return unsure
		}
		d := normHost(strings.TrimPrefix(r.Spec, "domain:"))
		h := normHost(u.Hostname())
		return when(h == d || strings.HasSuffix(h, "."+d))
	case c.Tool == "Grep" || c.Tool == "Glob":
		return r.judgeSearch(c)
	}
	for _, k := range []string{"file_path", "notebook_path", "path"} {
		if p := c.str(k); p != "" {
			return when(c.matchPath(r.Spec, p))
		}
	}
	return no
}

func when(b bool) outcome {
	if b {
		return yes
	}
	return no
}

// normHost is a host name as DNS compares it: case folded, without the
// trailing dot of a fully qualified name.
func normHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

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

// judgeSearch applies a Read rule to Grep and Glob: they read every file
// under their path that their filter (Grep's glob, Glob's pattern) lets
// through. A filter that can pick the rule's file matches; no filter over
// a directory that may hold it cannot be judged.
func (r Rule) judgeSearch(c Call) outcome {
	root := c.str("path")
	if root != "" && c.matchPath(r.Spec, root) {
		return yes
	}
	if root == "" {
		root = c.Cwd
	}
	if !c.mayHold(r.Spec, root) {
		return no
	}
	filter := c.str("glob")
	if c.Tool == "Glob" {
		filter = c.str("pattern")
	}
	if filter == "" {
		return unsure
	}
	fb, rb := path.Base(filter), path.Base(strings.TrimSuffix(r.Spec, "/**"))
	if ok, _ := path.Match(fb, rb); ok {
		return yes
	}
	if ok, _ := path.Match(rb, fb); ok {
		return yes
	}
	if strings.HasSuffix(r.Spec, "/**") || strings.HasSuffix(r.Spec, "/") {
		return unsure // any file of a denied directory
	}
	return no
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
