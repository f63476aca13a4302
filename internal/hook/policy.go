package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/policy"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/state"
)

// loadPolicies sets what the hooks need of the config's [policy]: from
// the hook's own command line in a session ccbridge started (the model
// cannot rewrite it), else from the daemon's record (a missing or
// unreadable record means no rules, redaction on, the default audit dir;
// enforce fails closed on it instead). It runs once a hook knows the
// session is ccbridge's.
func (h *handler) loadPolicies() {
	switch {
	case h.arg != nil:
		h.policies = state.Policies{RedactOff: h.arg.RedactOff, AuditDir: h.arg.AuditDir}
	case h.store != nil:
		h.policies, h.policiesErr = state.ReadPolicies(h.store.Dir)
	}
	redact.SetEnabled(!h.policies.RedactOff)
}

// appendAudit logs a decision, secrets masked, waiting for the log's lock
// no longer than ctx allows.
func (h *handler) appendAudit(ctx context.Context, e audit.Entry) error {
	// The hooks know no bot token (the daemon posts for them): the
	// redactor's token formats mask those.
	audit.SetRedactor(redact.String)
	return audit.AppendContext(ctx, h.auditDir(), e)
}

// auditDir is where decisions are logged.
func (h *handler) auditDir() string {
	if h.policies.AuditDir != "" {
		return h.policies.AuditDir
	}
	d, _ := state.DurableDir()
	return d
}

// policyReason prefixes what Claude and the terminal show.
const policyReason = "ccbridge policy"

// policyAuditWait bounds the audit write after a decision. Claude waits for
// the synchronous policy hook to exit, for at most the 10 s its settings
// give it, then kills it and runs the tool: the decision printed is only
// as good as the exit that follows soon enough.
const policyAuditWait = 500 * time.Millisecond

// enforce answers PreToolUse from the synchronous policy hook: deny with
// the rule named (the model gets it as the tool's error and the turn goes
// on), or ask, which makes Claude Code open its permission dialog in every
// mode, and so raise PermissionRequest and a card. No rule, no output: the
// normal flow runs. It runs for hand-started sessions too (by cwd).
//
// It fails closed: where a session's rules should hold but cannot be known
// (the record missing, corrupt or of another version, the session's
// record unreadable), it asks.
func (h *handler) enforce(in *claudehook.Input, global bool) error {
	if in.HookEventName != claudehook.EventPreToolUse {
		return nil
	}
	if global && h.session != "" && h.ownClaude(in.SessionID) {
		return nil // the Claude ccbridge started: its own --settings hook enforces
	}
	rules, sc, unknown := h.rulesFor(in)
	var v policy.Verdict
	var reason string
	var own string
	if h.arg != nil && len(h.arg.Protect) > 0 {
		own = h.guarded(in)
	}
	switch {
	case own != "":
		v = policy.Verdict{Decision: "deny", Rule: ownFilesRule}
		reason = fmt.Sprintf("%s: this call names %s, one of ccbridge's own files (its runtime records, config, bot tokens or audit log), which this session may not read or change", policyReason, own)
	case unknown != "":
		v.Decision = "ask"
		reason = fmt.Sprintf("%s: %s, so which rules hold is unknown; confirm this call", policyReason, unknown)
	case len(rules.Ask) > 0 || len(rules.Deny) > 0:
		v = h.check(in, sc, rules)
		switch {
		case v.Unsure:
			reason = fmt.Sprintf("%s: cannot tell whether rule %s covers this call (it runs something the rule cannot see); confirm it", policyReason, v.Rule)
		case v.Decision == "ask":
			reason = fmt.Sprintf("%s: rule %s asks for confirmation", policyReason, v.Rule)
		default:
			reason = fmt.Sprintf("%s: denied by rule %s", policyReason, v.Rule)
		}
	}
	if v.Decision == "" {
		return nil
	}
	v.Decision, reason = policyFor(in, v.Decision, reason) // codex.go
	h.log.Info("policy", "decision", v.Decision, "rule", v.Rule, "unsure", v.Unsure, "unknown", unknown, "tool", in.ToolName)
	// The decision first: the audit record must never delay or lose it.
	err := json.NewEncoder(h.out).Encode(claudehook.PreToolUseOutput{HookSpecificOutput: claudehook.PreToolUseDecision{
		HookEventName: claudehook.EventPreToolUse, PermissionDecision: v.Decision, PermissionDecisionReason: reason}})
	ctx, cancel := context.WithTimeout(context.Background(), policyAuditWait)
	defer cancel()
	if aerr := h.appendAudit(ctx, audit.Entry{Kind: "policy", Server: sc.server, Project: sc.project, Session: h.session,
		Tool: in.ToolName, Asked: asked(in.ToolName, in.ToolInput), Answer: v.Decision, Rule: v.Rule, Who: "ccbridge", From: audit.FromPolicy}); aerr != nil {
		h.log.Error("audit", "err", aerr)
	}
	return err
}

// ownFilesRule names, in the audit log, the refusal of a call that names
// ccbridge's own files.
const ownFilesRule = "ccbridge's own files"

// protectVars are the variables of a session's environment that hold
// ccbridge's own paths (state.EnvRuntimeDir, config.EnvConfig: the hooks
// never import config).
var protectVars = []string{state.EnvRuntimeDir, "CCBRIDGE_CONFIG"}

// guarded is the guarded path (or variable) the call names, "" if none.
func (h *handler) guarded(in *claudehook.Input) string {
	home, _ := os.UserHomeDir()
	return policy.Guarded(policy.Call{Tool: in.ToolName, Input: in.ToolInput, Cwd: in.Cwd, Home: home}, h.arg.Protect, protectVars)
}

// ownClaude reports whether claudeSession is the Claude recorded for the
// hook's CCBRIDGE_SESSION. A claude the model starts from that session's
// shell inherits the variable but not its settings: the global hooks must
// govern it with the session's rules rather than step aside.
func (h *handler) ownClaude(claudeSession string) bool {
	if h.store == nil || claudeSession == "" {
		return false
	}
	s, err := h.store.Sessions.Get(h.session)
	return err == nil && s.ClaudeSessionID == claudeSession
}

// rulesFor returns the rules that hold where in runs and their scope; or,
// when rules should hold but cannot be read, why not.
func (h *handler) rulesFor(in *claudehook.Input) (rules state.PolicyRules, sc scope, unknown string) {
	if h.argErr != nil {
		return rules, scope{root: in.Cwd}, "the hook's rules cannot be decoded"
	}
	if h.arg != nil {
		// A session ccbridge started: its rules came on the command line.
		sc = scope{root: in.Cwd}
		if h.store != nil {
			if sess, err := h.store.Sessions.Get(h.session); err == nil {
				sc = h.sessionScope(sess, in.Cwd)
				if sc.root == "" {
					sc.root = in.Cwd
				}
			}
		}
		return state.PolicyRules{Ask: h.arg.Ask, Deny: h.arg.Deny}, sc, ""
	}
	if h.store == nil {
		if h.session != "" {
			return rules, scope{root: in.Cwd}, "the runtime directory cannot be opened"
		}
		if errors.Is(h.storeErr, state.ErrUnsafeDir) {
			// Planted by another user, or shared: the project's rules may
			// well hold here, in the directory the daemon really keeps.
			return rules, scope{root: in.Cwd}, "the runtime directory was refused (" + h.storeErr.Error() + ")"
		}
		return rules, sc, ""
	}
	sc, known := h.policyScope(in)
	if known && sc == (scope{}) {
		return rules, sc, "" // no project's rules hold here
	}
	h.loadPolicies()
	switch {
	case h.policiesErr != nil:
		return rules, sc, "the policy record cannot be read (" + h.policiesErr.Error() + ")"
	case !known && h.policies.Any():
		return rules, sc, "the session's record cannot be read"
	case !known:
		return rules, sc, ""
	}
	return h.policies.Rules(sc.server, sc.project, sc.thread), sc, ""
}

// scope is where a session's [policy] rules come from, and the directory
// their relative paths start from.
type scope struct{ server, project, thread, root string }

// policyScope finds the rules that hold where in runs. known is false only
// when the session's record cannot be read and no project holds the cwd.
//
// A record that cannot be read must not switch the rules off: the project
// that holds the cwd still decides (with its channel's rules, which a
// thread's only add to), and where none does, enforce asks a person rather
// than let every call through.
func (h *handler) policyScope(in *claudehook.Input) (sc scope, known bool) {
	if h.session == "" {
		if !h.routeByCwd(in.Cwd) {
			return scope{}, true // not ccbridge's: no rules
		}
		// Taken over by a thread (handstarted.go): the thread's rules.
		if sess, ok := h.takenOver(in.SessionID); ok {
			return h.sessionScope(sess, in.Cwd), true
		}
		return scope{server: h.route.Server, project: h.route.Project, root: h.route.Path}, true
	}
	sess, err := h.store.Sessions.Get(h.session)
	if err != nil {
		h.log.Warn("session record unreadable; rules by cwd", "err", err)
		if r, ok := h.routeFor(in.Cwd); ok {
			return scope{server: r.Server, project: r.Project, root: r.Path}, true
		}
		return scope{}, false
	}
	return h.sessionScope(sess, in.Cwd), true
}

// takenOver returns the session of the thread that took a hand-started
// Claude over, if one did, and routes the hook to it as bindTo does.
func (h *handler) takenOver(claudeSession string) (state.Session, bool) {
	if claudeSession == "" {
		return state.Session{}, false
	}
	l, err := h.store.Live.Get(claudeSession)
	if err != nil || l.Bound == "" {
		return state.Session{}, false
	}
	sess, err := h.store.Sessions.Get(l.Bound)
	if err != nil {
		return state.Session{}, false
	}
	h.session, h.route = l.Bound, nil
	return sess, true
}

// sessionScope is a session's scope. A session of another front end
// (ccbridge mcp) has no project of its own: the project whose directory
// holds its cwd decides, with its channel's rules (it is in no thread).
func (h *handler) sessionScope(sess state.Session, cwd string) scope {
	if sess.Server == "" {
		if r, ok := h.routeFor(cwd); ok {
			return scope{server: r.Server, project: r.Project, root: r.Path}
		}
		return scope{}
	}
	sc := scope{server: sess.Server, project: sess.Project, thread: sess.ThreadID, root: sess.Cwd}
	if sc.root == "" {
		sc.root = cwd
	}
	return sc
}

// check applies rules to the call; relative paths start at the scope's
// root.
func (h *handler) check(in *claudehook.Input, sc scope, rules state.PolicyRules) policy.Verdict {
	set, err := policy.New(rules.Ask, rules.Deny)
	if err != nil {
		h.log.Warn("policy rules left out", "err", err)
	}
	home, _ := os.UserHomeDir()
	return set.Check(policy.Call{Tool: in.ToolName, Input: in.ToolInput, Cwd: sc.root, Home: home})
}

// askRule names the ask rule that made Claude Code open this prompt, for
// the card; "" when none covers the call.
func (h *handler) askRule(in *claudehook.Input, sess state.Session) string {
	sc := h.sessionScope(sess, in.Cwd)
	rules := h.policies.Rules(sc.server, sc.project, sc.thread)
	if h.arg != nil {
		rules = state.PolicyRules{Ask: h.arg.Ask, Deny: h.arg.Deny}
	}
	if len(rules.Ask) == 0 && len(rules.Deny) == 0 {
		return ""
	}
	if v := h.check(in, sc, rules); v.Decision == "ask" {
		return v.Rule
	}
	return ""
}

// enforceWithout runs the policy hook when the runtime directory cannot be
// opened (removed, replaced, not this user's): the rules on the command
// line still hold, and a ccbridge session without them asks.
func (h *handler) enforceWithout(stdin io.Reader, global bool, args []string) int {
	in, err := claudehook.Decode(stdin)
	if err != nil {
		h.log.Error("bad input", "err", err)
		return 0
	}
	fromAgent(in, args)
	if err := h.enforce(in, global); err != nil {
		h.log.Error("hook failed", "err", err)
	}
	return 0
}
