package claudehook

import (
	"encoding/json"
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
	Hooks      map[string][]HookMatcher `json:"hooks"`
	StatusLine *StatusLine              `json:"statusLine,omitempty"`
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
// every event they handle. Stop, StopFailure and PreToolUse are async, so
// posting to Discord never keeps Claude busy; PermissionRequest waits for an
// answer up to promptTimeout.
func BridgeSettings(stopBin, pretoolBin string, promptTimeout time.Duration) Settings {
	cmd := func(bin string, async bool, timeout int) []HookMatcher {
		return []HookMatcher{{Hooks: []HookCommand{{Type: "command", Command: shellQuote(bin), Async: async, Timeout: timeout}}}}
	}
	permTimeout := int((promptTimeout + permissionMargin).Seconds())
	return Settings{Hooks: map[string][]HookMatcher{
		EventStop:               cmd(stopBin, true, 0),
		EventStopFailure:        cmd(stopBin, true, 0),
		EventUserPromptSubmit:   cmd(stopBin, false, 10),
		EventNotification:       cmd(stopBin, false, 10),
		EventSessionStart:       cmd(stopBin, false, 10),
		EventSessionEnd:         cmd(stopBin, false, 10),
		EventPostModelSwitch:    cmd(stopBin, false, 10),
		EventPreToolUse:         append(cmd(pretoolBin, true, 0), policyHook(pretoolBin)),
		EventPermissionRequest:  cmd(pretoolBin, false, permTimeout),
		EventPostToolUse:        cmd(pretoolBin, false, 10),
		EventPostToolUseFailure: cmd(pretoolBin, false, 10),
	}, StatusLine: &StatusLine{Type: "command", Command: shellQuote(stopBin) + " statusline"}}
}

// PolicyFlag selects the PreToolUse run that enforces the [policy]: it is
// registered synchronously, apart from the async one that posts progress,
// because only a synchronous hook's answer (deny or ask) counts.
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
