// Package claudehook holds the wire types of Claude Code's hooks (2.1.328;
// see docs claude-code-protocol.md): the payloads hooks receive on stdin and
// the answers they print, decoded tolerantly so an added field never breaks a
// hook. It also reads the transcript a payload points at. It imports no other
// internal package.
package claudehook

import (
	"encoding/json"
	"fmt"
	"io"
)

// Hook event names.
const (
	EventStop               = "Stop"
	EventStopFailure        = "StopFailure"
	EventPreToolUse         = "PreToolUse"
	EventPermissionRequest  = "PermissionRequest"
	EventPostToolUse        = "PostToolUse"
	EventPostToolUseFailure = "PostToolUseFailure"
	EventUserPromptSubmit   = "UserPromptSubmit"
	EventNotification       = "Notification"
	EventSessionStart       = "SessionStart"
	EventSessionEnd         = "SessionEnd"
	// EventPostModelSwitch fires once Claude has switched model (with /model,
	// after its "Switch model?" dialog when one is shown); verified on 2.1.328.
	EventPostModelSwitch = "PostModelSwitch"
)

// Input is any hook payload. One flat struct serves every event because the
// hooks dispatch on HookEventName after a single decode; fields an event
// does not carry stay zero. Unknown fields are ignored.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PromptID       string `json:"prompt_id,omitempty"`
	// TurnID is Codex's turn (agents.md §1.3.1); Claude sends prompt_id.
	TurnID string `json:"turn_id,omitempty"`
	// Agent is "codex" when Codex runs the hook (set by the hook from its
	// command line, never from the payload); "" for Claude Code.
	Agent          string `json:"-"`
	PermissionMode string `json:"permission_mode,omitempty"`
	AgentType      string `json:"agent_type,omitempty"`

	// Stop and StopFailure.
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`

	// StopFailure and PostToolUseFailure: the error text.
	Error string `json:"error,omitempty"`

	// Tool events.
	ToolName              string             `json:"tool_name,omitempty"`
	ToolInput             json.RawMessage    `json:"tool_input,omitempty"`
	ToolUseID             string             `json:"tool_use_id,omitempty"`
	PermissionSuggestions []PermissionUpdate `json:"permission_suggestions,omitempty"`
	DurationMS            int64              `json:"duration_ms,omitempty"`

	// UserPromptSubmit.
	Prompt string `json:"prompt,omitempty"`

	// SessionStart (source, model) and SessionEnd (reason).
	Source string `json:"source,omitempty"`
	Model  string `json:"model,omitempty"`
	Reason string `json:"reason,omitempty"`

	// PostModelSwitch: the model asked for (as typed).
	RequestedModel string `json:"requested_model,omitempty"`

	// Notification.
	Message          string `json:"message,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`
}

// maxInput bounds a payload; a Write of a large file is the biggest seen.
const maxInput = 64 << 20

// Decode reads one payload.
func Decode(r io.Reader) (*Input, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInput))
	if err != nil {
		return nil, fmt.Errorf("read hook input: %w", err)
	}
	var in Input
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("decode hook input: %w", err)
	}
	if in.HookEventName == "" {
		return nil, fmt.Errorf("decode hook input: no hook_event_name")
	}
	return &in, nil
}

// Rule is one permission rule, e.g. Bash with "npm test *".
type Rule struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// PermissionUpdate is one entry of permission_suggestions, and of the
// updatedPermissions a PermissionRequest answer may carry.
type PermissionUpdate struct {
	Type        string   `json:"type"` // addRules, setMode, addDirectories, …
	Rules       []Rule   `json:"rules,omitempty"`
	Behavior    string   `json:"behavior,omitempty"`
	Mode        string   `json:"mode,omitempty"`
	Directories []string `json:"directories,omitempty"`
	Destination string   `json:"destination,omitempty"` // session, localSettings, projectSettings, userSettings
}

// BashInput is tool_input of Bash.
type BashInput struct {
	Command     string `json:"command"`
	Description string `json:"description,omitempty"`
}

// WriteInput is tool_input of Write.
type WriteInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

// EditInput is tool_input of Edit.
type EditInput struct {
	FilePath   string `json:"file_path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// QuestionOption is one choice of an AskUserQuestion question.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Question is one question of AskUserQuestion.
type Question struct {
	Question    string           `json:"question"`
	Header      string           `json:"header,omitempty"`
	Options     []QuestionOption `json:"options"`
	MultiSelect bool             `json:"multiSelect"`
}

// AskInput is tool_input of AskUserQuestion. Answers are keyed by the exact
// question text; multi-select labels are joined with ", ".
type AskInput struct {
	Questions   []Question                  `json:"questions"`
	Answers     map[string]string           `json:"answers,omitempty"`
	Annotations map[string]AnswerAnnotation `json:"annotations,omitempty"`
}

// AnswerAnnotation adds a note to one answer.
type AnswerAnnotation struct {
	Notes string `json:"notes,omitempty"`
}

// PlanInput is tool_input of ExitPlanMode as hooks see it: Claude Code
// fills in the plan and its file before the hooks run.
type PlanInput struct {
	Plan         string `json:"plan"`
	PlanFilePath string `json:"planFilePath,omitempty"`
}

// PreToolUseOutput answers PreToolUse.
type PreToolUseOutput struct {
	HookSpecificOutput PreToolUseDecision `json:"hookSpecificOutput"`
}

// PreToolUseDecision: permissionDecision is allow, deny, ask or defer;
// updatedInput replaces the whole tool input.
type PreToolUseDecision struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

// PermissionRequestOutput answers PermissionRequest.
type PermissionRequestOutput struct {
	HookSpecificOutput PermissionRequestAnswer `json:"hookSpecificOutput"`
}

// PermissionRequestAnswer wraps the decision.
type PermissionRequestAnswer struct {
	HookEventName string   `json:"hookEventName"`
	Decision      Decision `json:"decision"`
}

// Decision is allow or deny. A deny message reaches the model verbatim and
// the turn continues, unless Interrupt is set (which aborts the turn and
// drops the message).
type Decision struct {
	Behavior           string             `json:"behavior"`
	Message            string             `json:"message,omitempty"`
	Interrupt          bool               `json:"interrupt,omitempty"`
	UpdatedInput       json.RawMessage    `json:"updatedInput,omitempty"`
	UpdatedPermissions []PermissionUpdate `json:"updatedPermissions,omitempty"`
}

// NewPermissionRequestOutput wraps a decision in the envelope Claude Code expects.
func NewPermissionRequestOutput(d Decision) PermissionRequestOutput {
	return PermissionRequestOutput{HookSpecificOutput: PermissionRequestAnswer{HookEventName: EventPermissionRequest, Decision: d}}
}
