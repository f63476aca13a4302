package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Policy is a [policy] table: at the top level (every project), in a
// project ([servers.projects.policy]), in its thread defaults
// ([servers.projects.thread.policy]) and in one thread. Rules add up from
// the top down: a project cannot lift a top-level deny.
type Policy struct {
	// Ask lists tool calls that always get a card, whatever the
	// permission mode (acceptEdits, auto, bypassPermissions).
	Ask []string `toml:"ask"`
	// Deny lists tool calls refused outright, naming the rule; the turn
	// goes on.
	Deny []string `toml:"deny"`
	// Redact masks secrets in everything posted to Discord; on unless set
	// to false (top level only).
	Redact *bool `toml:"redact"`
}

// RedactOn reports whether redaction is on (the default).
func (c *Config) RedactOn() bool { return c.Policy.Redact == nil || *c.Policy.Redact }

func (p Policy) plus(o Policy) Policy {
	out := Policy{Ask: slices.Clone(p.Ask), Deny: slices.Clone(p.Deny)}
	for _, r := range o.Ask {
		if !slices.Contains(out.Ask, r) {
			out.Ask = append(out.Ask, r)
		}
	}
	for _, r := range o.Deny {
		if !slices.Contains(out.Deny, r) {
			out.Deny = append(out.Deny, r)
		}
	}
	return out
}

// ChannelPolicy is the policy of a project's channel session.
func (c *Config) ChannelPolicy(p Project) Policy { return c.Policy.plus(p.Policy) }

// ThreadPolicy is the policy of a thread's session: the project's, its
// thread defaults', and the thread's own when it is configured.
func (c *Config) ThreadPolicy(p Project, threadID string) Policy {
	out := c.ChannelPolicy(p).plus(p.Thread.Policy)
	for _, t := range p.Threads {
		if t.ThreadID == threadID && threadID != "" {
			out = out.plus(t.Policy)
		}
	}
	return out
}

// ruleSyntax is Claude Code's permission-rule shape: Tool or
// Tool(specifier); MCP rules may end in *. Compiled for the first rule.
var ruleSyntax = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9_-]*(?:\(.+\))?|mcp__[A-Za-z0-9_-]+(?:__[A-Za-z0-9_*-]*)?)$`)
})

func (v *checker) policy(key string, p Policy, top bool) {
	for _, list := range []struct {
		name  string
		rules []string
	}{{"ask", p.Ask}, {"deny", p.Deny}} {
		for i, r := range list.rules {
			r = strings.TrimSpace(r)
			switch {
			case !ruleSyntax().MatchString(r):
				v.errf(fmt.Sprintf("%s.%s[%d]", key, list.name, i), "%q is not a permission rule; write Tool or Tool(specifier), e.g. \"Bash(git push *)\" or \"Write(.env*)\"", r)
			case strings.HasPrefix(r, "WebFetch(") && !strings.HasPrefix(r, "WebFetch(domain:"):
				// Claude Code refuses it with a dialog at start.
				v.errf(fmt.Sprintf("%s.%s[%d]", key, list.name, i), "%q: a WebFetch rule names a host: write WebFetch(domain:example.com)", r)
			}
		}
	}
	if p.Redact != nil && !top {
		v.errf(key+".redact", "redaction is set for all projects at once, in the top-level [policy]")
	}
	if p.Redact != nil && !*p.Redact {
		v.warnf(key+".redact", "redaction is off: secrets in replies, cards and files reach Discord")
	}
}

// checkPolicies checks every [policy] table.
func (c *Config) checkPolicies(v *checker) {
	v.policy("policy", c.Policy, true)
	for i, s := range c.Servers {
		for j, p := range s.Projects {
			pk := fmt.Sprintf("servers[%d].projects[%d]", i, j)
			v.policy(pk+".policy", p.Policy, false)
			v.policy(pk+".thread.policy", p.Thread.Policy, false)
			for k, t := range p.Threads {
				v.policy(fmt.Sprintf("%s.threads[%d].policy", pk, k), t.Policy, false)
			}
		}
	}
}

// SessionPolicy is the policy of one session: a project's channel (thread
// ""), or one of its threads. Any other session gets the channel policy of
// the project whose directory holds dir: a session of another front end
// (ccbridge mcp: no server), and none outside every project, as the hooks
// decide; a server session of no configured project (a folder opened
// with /open) on top of the top-level policy, which holds for every
// session of a server.
func (c *Config) SessionPolicy(server, project, thread, dir string) Policy {
	for _, s := range c.Servers {
		for _, p := range s.Projects {
			if server != "" && s.Name == server && p.Name == project {
				if thread == "" {
					return c.ChannelPolicy(p)
				}
				return c.ThreadPolicy(p, thread)
			}
		}
	}
	if p, ok := c.ProjectHolding(dir); ok {
		return c.ChannelPolicy(p)
	}
	if server != "" {
		return c.Policy
	}
	return Policy{}
}

// ProjectHolding finds the project whose directory holds dir (or is it),
// the innermost when projects nest. Symlinks count on both sides: a
// project configured through one holds the real folder too.
func (c *Config) ProjectHolding(dir string) (Project, bool) {
	var best Project
	bestLen := -1
	dirs := pathForms(dir)
	for _, s := range c.Servers {
		for _, p := range s.Projects {
			pp, err := p.ProjectPath()
			if err != nil {
				continue
			}
			for _, ppf := range pathForms(pp) {
				for _, d := range dirs {
					if within(d, ppf) && len(ppf) > bestLen {
						best, bestLen = p, len(ppf)
					}
				}
			}
		}
	}
	return best, bestLen >= 0
}

// ProjectsWithin lists the projects whose directory lies strictly inside
// dir: a session there would reach their files without their [policy].
func (c *Config) ProjectsWithin(dir string) []Project {
	var out []Project
	dirs := pathForms(dir)
	for _, s := range c.Servers {
		for _, p := range s.Projects {
			pp, err := p.ProjectPath()
			if err != nil {
				continue
			}
			if slices.ContainsFunc(pathForms(pp), func(ppf string) bool {
				return slices.ContainsFunc(dirs, func(d string) bool { return ppf != d && within(ppf, d) })
			}) {
				out = append(out, p)
			}
		}
	}
	return out
}

// pathForms is a path cleaned, and with its symlinks resolved when that
// differs (and it exists).
func pathForms(p string) []string {
	if p == "" {
		return nil
	}
	out := []string{filepath.Clean(p)}
	if real, err := filepath.EvalSymlinks(p); err == nil && real != out[0] {
		out = append(out, real)
	}
	return out
}

// SecretPaths are where the config and the bot tokens live, for the deny
// rules that keep a session's model from reading or rewriting them: the
// config's directory (as dir/) when it is ccbridge's own, else the config file and
// the service's environment file (service.env) next to it; and each
// token_file.
func (c *Config) SecretPaths() []string {
	var out []string
	if c.Path != "" {
		if abs, err := filepath.Abs(c.Path); err == nil {
			dir := filepath.Dir(abs)
			if c.OwnDir(dir) {
				out = append(out, dir+"/")
			} else {
				out = append(out, abs, filepath.Join(dir, "service.env"))
			}
		}
	}
	for _, s := range c.Servers {
		if s.TokenFile == "" {
			continue
		}
		if p, err := ExpandHome(s.TokenFile); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				out = append(out, abs)
			}
		}
	}
	return out
}

// OwnDir reports whether dir is ccbridge's own (named for it, like
// ~/.config/ccbridge) and holds nothing a session works on: not the home
// directory, and no project inside it or around it.
func (c *Config) OwnDir(dir string) bool {
	if !strings.Contains(filepath.Base(dir), "ccbridge") {
		return false
	}
	if home, err := os.UserHomeDir(); err == nil && within(home, dir) {
		return false
	}
	for _, s := range c.Servers {
		for _, p := range s.Projects {
			if pp, err := p.ProjectPath(); err == nil && (within(pp, dir) || within(dir, pp)) {
				return false
			}
		}
	}
	return true
}

// within reports whether p is dir or lies under it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
