package daemon

import (
	"context"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// setRedaction sets redaction for the daemon's own posts as cfg says; the
// caller does so once the hooks' records say the same (writePolicies).
func setRedaction(cfg *config.Config) {
	redact.SetEnabled(cfg.RedactOn())
	audit.SetRedactor(redact.String) // the router's records (commits, merges) too
}

// writePolicies gives the hooks the config's [policy] rules of every
// project, its thread defaults and its configured threads, the redaction
// switch and the audit log's directory.
func writePolicies(ctx context.Context, store *state.Store, cfg *config.Config, durable string) error {
	scopes := map[string]state.PolicyRules{}
	rules := func(p config.Policy) state.PolicyRules { return state.PolicyRules{Ask: p.Ask, Deny: p.Deny} }
	for _, s := range cfg.Servers {
		// Folders opened with /open have the global rules (their threads'
		// scope: session.OpenedProject is no project's name).
		scopes[state.PolicyScope(s.Name, session.OpenedProject, "*")] = rules(cfg.ThreadPolicy(config.Project{}, ""))
		for _, p := range s.Projects {
			scopes[state.PolicyScope(s.Name, p.Name, "")] = rules(cfg.ChannelPolicy(p))
			scopes[state.PolicyScope(s.Name, p.Name, "*")] = rules(cfg.ThreadPolicy(p, ""))
			for _, t := range p.Threads {
				scopes[state.PolicyScope(s.Name, p.Name, t.ThreadID)] = rules(cfg.ThreadPolicy(p, t.ThreadID))
			}
		}
	}
	c, err := state.OpenPolicies(store.Dir)
	if err != nil {
		return err
	}
	_, err = c.Update(ctx, state.PoliciesKey, func(p *state.Policies) error {
		p.Scopes, p.RedactOff, p.AuditDir = scopes, !cfg.RedactOn(), durable
		return nil
	})
	return err
}
