package state

// Policies is what the hooks need of the config's [policy] tables, written
// by the daemon under PoliciesKey (hooks never parse the config): the
// rules of every scope, whether redaction is off, and where the audit log
// lives.
type Policies struct {
	// Scopes maps PolicyScope(...) to its rules, already added up from
	// the top level down.
	Scopes    map[string]PolicyRules `json:"scopes"`
	RedactOff bool                   `json:"redact_off,omitempty"`
	AuditDir  string                 `json:"audit_dir,omitempty"`
}

// PolicyRules are one scope's rules in Claude Code's permission-rule
// syntax.
type PolicyRules struct {
	Ask  []string `json:"ask,omitempty"`
	Deny []string `json:"deny,omitempty"`
}

// PoliciesKey names the single record of the Policies collection.
const PoliciesKey = "policies"

const policiesVersion = 1

// OpenPolicies opens the collection that holds the Policies record.
func OpenPolicies(d *Dir) (*Collection[Policies], error) {
	return newCollection[Policies](d, "policies", policiesVersion)
}

// ReadPolicies reads the Policies record for a hook that enforces it. It
// never moves an unreadable record aside (Get would, and start afresh with
// no rules): a missing, corrupt or other-version record is an error, and
// the hook fails closed on it.
func ReadPolicies(d *Dir) (Policies, error) {
	c, err := OpenPolicies(d)
	if err != nil {
		return Policies{}, err
	}
	p, err := c.path(PoliciesKey)
	if err != nil {
		return Policies{}, err
	}
	var v Policies
	if _, err := c.read(p, &v); err != nil {
		return Policies{}, err
	}
	return v, nil
}

// PolicyScope names a scope: a project's channel (thread ""), the threads
// of a project by default (thread "*"), or one configured thread.
func PolicyScope(server, project, thread string) string {
	if thread == "" {
		return server + "/" + project
	}
	return server + "/" + project + "/" + thread
}

// Any reports whether some scope has a rule. The daemon writes a scope
// for every project, empty when the config has no rules for it.
func (p Policies) Any() bool {
	for _, r := range p.Scopes {
		if len(r.Ask) > 0 || len(r.Deny) > 0 {
			return true
		}
	}
	return false
}

// Rules returns the rules for a session in a project (thread "" for the
// channel's own session): the thread's own scope, else the project's
// thread defaults, else the project's.
func (p Policies) Rules(server, project, thread string) PolicyRules {
	if thread != "" {
		if r, ok := p.Scopes[PolicyScope(server, project, thread)]; ok {
			return r
		}
		if r, ok := p.Scopes[PolicyScope(server, project, "*")]; ok {
			return r
		}
	}
	return p.Scopes[PolicyScope(server, project, "")]
}
