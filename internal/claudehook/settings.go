package claudehook

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// HookCommand is one command hook in Claude Code settings.
type HookCommand struct {
	Type    string `json:"type"` // "command"
	Command string `json:"command"`
	Async   bool   `json:"async,omitempty"`
	Timeout int    `json:"timeout,omitempty"` // seconds
}

// HookMatcher groups hooks for an event; an empty matcher matches every tool.
type HookMatcher struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []HookCommand `json:"hooks"`
}

// Settings is the part of a Claude Code settings file ccbridge writes.
type Settings struct {
	Hooks       map[string][]HookMatcher `json:"hooks"`
	StatusLine  *StatusLine              `json:"statusLine,omitempty"`
	Permissions *Permissions             `json:"permissions,omitempty"`
}

// Permissions are permission rules Claude Code enforces itself, in its
// own process: deny refuses, ask opens the dialog in every mode.
type Permissions struct {
	Deny []string `json:"deny,omitempty"`
	Ask  []string `json:"ask,omitempty"`
}

// SessionPolicy is one session's [policy], as its hooks get it.
type SessionPolicy struct {
	Ask       []string `json:"ask,omitempty"`
	Deny      []string `json:"deny,omitempty"`
	RedactOff bool     `json:"redact_off,omitempty"`
	AuditDir  string   `json:"audit_dir,omitempty"`
	// Protect is ccbridge's own files (absolute; a directory ends in "/"),
	// which the policy hook refuses every call that names: a Codex
	// session's every tool, a Claude session's Bash and the rest beyond
	// the Read and Edit its deny rules stop. Only the policy hook gets it.
	Protect []string `json:"protect,omitempty"`
}

// RulesFlag carries a SessionPolicy (JSON) on a hook's command line.
const RulesFlag = "--rules="

// WithPolicy returns the settings of one session. Its rules go to Claude
// Code as permissions, which it enforces in-process, and to every hook on
// its command line; protect are more deny rules (ccbridge's own files).
// Both live in the arguments of the running claude, which the model it
// runs cannot rewrite, unlike any file the hooks could read.
func (s Settings) WithPolicy(p SessionPolicy, protect []string) Settings {
	// The guarded paths go to the policy hook alone: on every hook's
	// command line they would make the pane's command longer than tmux
	// takes.
	guarded := " " + shellQuote(p.Arg())
	p.Protect = nil
	arg := " " + shellQuote(p.Arg())
	out := Settings{Hooks: map[string][]HookMatcher{}, StatusLine: s.StatusLine}
	for ev, ms := range s.Hooks {
		for _, m := range ms {
			m.Hooks = slices.Clone(m.Hooks)
			for i := range m.Hooks {
				if strings.HasSuffix(m.Hooks[i].Command, " "+PolicyFlag) {
					m.Hooks[i].Command += guarded
				} else {
					m.Hooks[i].Command += arg
				}
			}
			out.Hooks[ev] = append(out.Hooks[ev], m)
		}
	}
	deny, ask := native(append(slices.Clone(p.Deny), protect...)), native(p.Ask)
	if len(deny) > 0 || len(ask) > 0 {
		out.Permissions = &Permissions{Deny: deny, Ask: ask}
	}
	return out
}

// Claude Code 2.1.328 applies a file rule by its tool family: it warns
// that Write(x) "never matches · use Edit(x)" and Glob(x) "never matches ·
// use Read(x)", and LS matches no tool.
var (
	nativeEdit = []string{"Write", "MultiEdit", "NotebookEdit"}
	nativeRead = []string{"Glob", "Grep", "LS", "NotebookRead"}
)

// native turns [policy] rules into rules Claude Code enforces as meant:
// file rules by their family (wider than the hook's, so Claude asks or
// refuses more, never less); a WebFetch rule without domain:, which it
// refuses with a dialog that would hold the session at its start, is left
// to the hook.
func native(rules []string) []string {
	var out []string
	for _, r := range rules {
		tool, spec, has := strings.Cut(strings.TrimSpace(r), "(")
		switch {
		case !has:
		case slices.Contains(nativeEdit, tool):
			r = "Edit(" + spec
		case slices.Contains(nativeRead, tool):
			r = "Read(" + spec
		case tool == "WebFetch" && !strings.HasPrefix(spec, "domain:"):
			continue
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// Arg is the policy as one argument of a hook's command line.
func (p SessionPolicy) Arg() string {
	b, _ := json.Marshal(p) // cannot fail: strings and a bool
	return RulesFlag + string(b)
}

// PolicyArg returns the SessionPolicy on a hook's command line; ok is
// false when there is none (a hook registered in the user's settings).
func PolicyArg(args []string) (p SessionPolicy, ok bool, err error) {
	for _, a := range args {
		if v, found := strings.CutPrefix(a, RulesFlag); found {
			if err := json.Unmarshal([]byte(v), &p); err != nil {
				return p, true, fmt.Errorf("decode %s: %w", RulesFlag, err)
			}
			return p, true, nil
		}
	}
	return p, false, nil
}

// StatusLine is Claude Code's statusLine setting.
type StatusLine struct {
	Type    string `json:"type"` // "command"
	Command string `json:"command"`
}

// permissionMargin is how much longer Claude Code waits for the
// PermissionRequest hook than the hook waits for Discord, so the hook always
// ends by itself (leaving the terminal dialog open) instead of being killed.
const permissionMargin = time.Minute

// BridgeSettings registers ccbridge's hook binaries (absolute paths) for
// every event they handle. Posting to Discord never keeps Claude busy:
// PreToolUse, Stop and StopFailure are sync only to take the progress's
// or the reply's place in its channel's order, before Claude runs the
// tool or the next turn, and leave the posting to a run they detach.
// PermissionRequest waits for an answer up to promptTimeout.
func BridgeSettings(stopBin, pretoolBin string, promptTimeout time.Duration) Settings {
	cmd := func(bin string, async bool, timeout int) []HookMatcher {
		return []HookMatcher{{Hooks: []HookCommand{{Type: "command", Command: shellQuote(bin), Async: async, Timeout: timeout}}}}
	}
	permTimeout := int((promptTimeout + permissionMargin).Seconds())
	return Settings{Hooks: map[string][]HookMatcher{
		EventStop:               cmd(stopBin, false, stopTimeout),
		EventStopFailure:        cmd(stopBin, false, stopTimeout),
		EventUserPromptSubmit:   cmd(stopBin, false, 10),
		EventNotification:       cmd(stopBin, false, 10),
		EventSessionStart:       cmd(stopBin, false, 10),
		EventSessionEnd:         cmd(stopBin, false, 10),
		EventPostModelSwitch:    cmd(stopBin, false, 10),
		EventPreToolUse:         append(cmd(pretoolBin, false, stopTimeout), policyHook(pretoolBin)),
		EventPermissionRequest:  cmd(pretoolBin, false, permTimeout),
		EventPostToolUse:        cmd(pretoolBin, false, 10),
		EventPostToolUseFailure: cmd(pretoolBin, false, 10),
	}, StatusLine: &StatusLine{Type: "command", Command: shellQuote(stopBin) + " statusline"}}
}

// stopTimeout bounds the Stop and PreToolUse hooks, which take
// milliseconds; only a hook that could not detach its posting run posts
// itself, within its 30 s budget.
const stopTimeout = 45

// PolicyFlag selects the PreToolUse run that enforces the [policy]: it is
// registered apart from the one that posts progress, which answers
// nothing.
const PolicyFlag = "--policy"

// policyTimeout bounds the policy hook, which reads one record and
// answers.
const policyTimeout = 10

func policyHook(pretoolBin string) HookMatcher {
	return HookMatcher{Hooks: []HookCommand{{Type: "command", Command: shellQuote(pretoolBin) + " " + PolicyFlag, Timeout: policyTimeout}}}
}

// JSON encodes the settings.
func (s Settings) JSON() []byte {
	b, _ := json.MarshalIndent(s, "", "  ") // cannot fail: plain strings, ints and bools
	return b
}

// Inline encodes the settings on one line, for `claude --settings '<json>'`
// (2.1.328 takes a JSON string as well as a file name there). Passing them
// inline means no settings file exists that someone else could replace.
func (s Settings) Inline() []byte {
	b, _ := json.Marshal(s) // cannot fail: plain strings, ints and bools
	return b
}

// shellQuote quotes a path for the shell Claude Code runs hook commands in.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
