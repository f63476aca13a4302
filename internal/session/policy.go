package session

import (
	"path/filepath"
	"strings"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// settingsFor returns the inline --settings of one session: the hooks,
// and its [policy] both as Claude Code permissions (enforced in Claude's
// own process) and on the hooks' command lines. Nothing the governed model
// can write (a record in the runtime directory, a settings file) decides
// which rules hold for it. The model is also denied ccbridge's own files:
// the runtime directory's records (bot tokens, the policy record), the
// config and token files, and the audit log's directory: Claude Code's
// deny rules stop its Read and Edit tools, and the policy hook refuses
// any other call that names one (Bash; SessionPolicy.Protect).
func (m *Manager) settingsFor(t Target) string {
	sp, own := m.sessionPolicy(t)
	sp.Protect = own
	var protect []string
	for _, g := range own {
		for _, v := range physical(g) {
			for _, tool := range []string{"Read", "Edit"} {
				protect = append(protect, tool+"(/"+v+")")
			}
		}
	}
	return string(m.live.Load().settings.WithPolicy(sp, protect).Inline())
}

// sessionPolicy is the session's policy as its hooks get it, and
// ccbridge's own files, which the model is kept away from (absolute; a
// directory ends in "/").
func (m *Manager) sessionPolicy(t Target) (claudehook.SessionPolicy, []string) {
	cfg := m.config()
	dir := t.Dir
	if t.PolicyDir != "" {
		dir = t.PolicyDir
	}
	p := cfg.SessionPolicy(t.Server, t.Project, t.ThreadID, dir)
	sp := claudehook.SessionPolicy{Ask: p.Ask, Deny: p.Deny, RedactOff: !cfg.RedactOn()}
	var own []string
	for _, g := range m.opt.Store.Dir.Guarded() {
		own = append(own, g+"/")
	}
	if d, err := state.DurableDir(); err == nil {
		sp.AuditDir = d
		if cfg.OwnDir(d) {
			own = append(own, d+"/")
		}
	}
	return sp, append(own, cfg.SecretPaths()...)
}

// physical returns an absolute path as a rule names it (a directory,
// written with a trailing slash, as dir/**), and also with its symlinks
// resolved when that differs: Claude Code matches the paths tools are
// given, which may be either.
func physical(p string) []string {
	dir := strings.HasSuffix(p, "/")
	p = filepath.Clean(p)
	out := []string{p}
	if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
		out = append(out, r)
	}
	if dir {
		for i := range out {
			out[i] += "/**"
		}
	}
	return out
}
