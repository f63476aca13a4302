package approval

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/state"
)

// DenyMessage is what the model reads after a plain Deny. The turn goes on
// (no interrupt), so Claude can choose another way.
const DenyMessage = "The user denied this tool call from Discord."

// scopes are the destinations a person may choose for an "always" rule.
var scopes = []struct{ dest, label, where string }{
	{"session", "this session", "until this Claude session ends"},
	{"localSettings", "this project, just me", "saved in .claude/settings.local.json"},
	{"projectSettings", "this project, shared", "saved in .claude/settings.json"},
	{"userSettings", "all my projects", "saved in ~/.claude/settings.json"},
}

func suggestions(req state.Request) []claudehook.PermissionUpdate {
	var s []claudehook.PermissionUpdate
	_ = json.Unmarshal(req.Suggestions, &s)
	return s
}

// suggestionLabel says what an "always" suggestion does.
func suggestionLabel(s claudehook.PermissionUpdate) string {
	switch s.Type {
	case "addRules":
		var rules []string
		for _, r := range s.Rules {
			if r.RuleContent != "" {
				rules = append(rules, fmt.Sprintf("%s(%s)", r.ToolName, r.RuleContent))
			} else {
				rules = append(rules, r.ToolName)
			}
		}
		return "always allow " + strings.Join(rules, ", ")
	case "setMode":
		if s.Mode == "acceptEdits" {
			return "allow edits for this session"
		}
		return "switch to " + s.Mode + " mode"
	case "addDirectories":
		return "allow access to " + strings.Join(s.Directories, ", ")
	}
	return s.Type
}

// scopesFor lists the destinations that make sense for a suggestion: a
// mode switch lives in the session only.
func scopesFor(s claudehook.PermissionUpdate) []int {
	if s.Type == "setMode" {
		return []int{0}
	}
	return []int{0, 1, 2, 3}
}

// Sizes on a permission card: what the model wrote about the call, the
// path it names, and the input shown in a code block.
const (
	maxDescription = 300
	maxPath        = 300
	maxInputShown  = 1400
	// maxAttach bounds the attached input: the card must upload within
	// the hook's few seconds, and Discord takes 10 MiB at most.
	maxAttach = 1 << 20
)

// permissionInput is what a card shows of a tool call: the header (what
// Claude wants, in its own escaped words) and the input for a code block,
// with the name to attach it under when it is too long to show whole.
func permissionInput(req state.Request) (header, lang, text, file string) {
	who := "Claude"
	if req.AgentType != "" {
		who = "Claude's " + escapeMarkdown(clip(req.AgentType, 60)) + " agent"
	}
	switch req.ToolName {
	case "Bash":
		var in claudehook.BashInput
		_ = json.Unmarshal(req.ToolInput, &in)
		header = fmt.Sprintf("🔐 **%s wants to run a command**\n", who)
		if d := strings.TrimSpace(in.Description); d != "" {
			header += "💬 " + escapeMarkdown(clip(d, maxDescription)) + "\n"
		}
		return header, "sh", in.Command, "command.sh"
	case "Write":
		var in claudehook.WriteInput
		_ = json.Unmarshal(req.ToolInput, &in)
		return fmt.Sprintf("🔐 **%s wants to create** %s\n", who, inlineCode(in.FilePath)), "", in.Content, attachName(in.FilePath)
	case "Edit":
		var in claudehook.EditInput
		_ = json.Unmarshal(req.ToolInput, &in)
		return fmt.Sprintf("🔐 **%s wants to edit** %s\n", who, inlineCode(in.FilePath)), "diff", unifiedPreview(in), "edit.diff"
	}
	return fmt.Sprintf("🔐 **%s wants to use %s**\n", who, escapeMarkdown(clip(req.ToolName, 100))), "json", string(req.ToolInput), "input.json"
}

// alwaysChoice is one entry of the "Always…" menu: a suggestion Claude
// Code made, in one scope that makes sense for it.
type alwaysChoice struct {
	value  string // the select option's value
	update claudehook.PermissionUpdate
	scope  int // index in scopes
}

// alwaysChoices lists the "Always…" menu of a request, in order, as many
// as one select holds. It is computed from the suggestions recorded with
// the request, so the card and the click agree on what was offered.
func alwaysChoices(req state.Request) []alwaysChoice {
	var out []alwaysChoice
	for i, s := range suggestions(req) {
		for _, si := range scopesFor(s) {
			if len(out) == chat.MaxOptions {
				return out
			}
			out = append(out, alwaysChoice{value: fmt.Sprintf("%d.%d", i, si), update: s, scope: si})
		}
	}
	return out
}

// maskedWarning replaces Allow on a card whose request the redaction of
// everything posted to Discord would mask: what the card shows is then not
// what would run (a URL password can hide "curl …|sh").
const maskedWarning = "⚠️ Part of this request was masked as a secret, so the card cannot show exactly what would run: approve it in the terminal, or deny it here."

// maskedNotice answers a click on Allow or Always… (a crafted one: the
// card does not offer them) on such a request.
const maskedNotice = "Part of this request was masked as a secret, so it cannot be allowed from Discord: approve it in the terminal, or deny it here."

func renderPermission(id string, req state.Request, room int) chat.Message {
	if req.Status != state.RequestPending {
		return permissionBody(req, room, "")
	}
	deny := []chat.Button{
		{Label: "Deny", CustomID: cid(req.Instance, id, "deny"), Style: chat.Danger},
		{Label: "Deny with instructions…", CustomID: cid(req.Instance, id, "denymsg"), Style: chat.Secondary},
	}
	if permissionMasked(req) {
		m := permissionBody(req, room, maskedWarning+"\n")
		m.Rows = []chat.Row{{Buttons: deny}}
		return m
	}
	if req.Keys != "" {
		room -= len([]rune(keysNote))
	}
	m := permissionBody(req, room, "")
	sug := suggestions(req)
	if req.Step == "always" && len(sug) > 0 {
		sel := &chat.Select{CustomID: cid(req.Instance, id, "alwayssel"), Placeholder: "Always allow… choose what and where", MinValues: 1, MaxValues: 1}
		for _, c := range alwaysChoices(req) {
			label := " — " + scopes[c.scope].label
			label = clip(suggestionLabel(c.update), chat.MaxOptionText-len([]rune(label))) + label
			sel.Options = append(sel.Options, chat.Option{Label: label, Value: c.value, Description: scopes[c.scope].where})
		}
		m.Rows = []chat.Row{{Select: sel}, {Buttons: []chat.Button{{Label: "Back", CustomID: cid(req.Instance, id, "back"), Style: chat.Secondary}}}}
		return m
	}
	buttons := []chat.Button{{Label: "Allow", CustomID: cid(req.Instance, id, "allow"), Style: chat.Success}}
	switch {
	case req.Keys != "":
		buttons = keysButtons(req.Instance, id) // keys.go
		m.Content += keysNote
	case len(sug) > 0:
		buttons = append(buttons, chat.Button{Label: "Always…", CustomID: cid(req.Instance, id, "always"), Style: chat.Primary})
	}
	m.Rows = []chat.Row{{Buttons: append(buttons, deny...)}}
	return m
}

// permissionBody is a permission card's text and files, with warn (if
// any) at the top.
func permissionBody(req state.Request, room int, warn string) chat.Message {
	header, lang, text, file := permissionInput(req)
	header = warn + header
	if req.PolicyRule != "" {
		header = "🛡️ Asked because of the policy rule `" + strings.ReplaceAll(req.PolicyRule, "`", "ʼ") + "`.\n" + header
	}
	// Whether the input is cut is decided on the pending card, which is
	// posted with its files; a closed card is an edit of it.
	banner := fmt.Sprintf("⚠️ **Cut: the input is too long to show whole. The middle is left out here; all of it is in the attached `%s`. Read it before you allow.**\n", file)
	fits := min(maxInputShown, chat.Limit-len([]rune(header+banner)))
	m := chat.Message{}
	if len([]rune(codeText(text)))+len([]rune(fence(lang, ""))) > fits {
		switch {
		case len(text) > maxAttach:
			// Too big to upload within the card's time: the terminal has it.
			banner = fmt.Sprintf("⚠️ **Cut: the input (%d bytes) is too long to show or attach. The middle is left out here; read it in the terminal (/screen) before you allow.**\n", len(text))
		case req.Status != state.RequestPending:
			banner = fmt.Sprintf("⚠️ **Cut here: all of the input is in the attached `%s`.**\n", file)
		}
		header += banner
		if len(text) <= maxAttach {
			m.Files = []chat.File{{Name: file, Data: []byte(text)}}
		}
	}
	m.Content = header + codeBlock(lang, text, min(maxInputShown, room-len([]rune(header))))
	return m
}

// permissionMasked reports whether the pending card of req would be
// masked when posted: its text, a file it attaches (which the poster
// holds back) or an "always" rule it offers. The redaction switch of the
// config applies: with redaction off nothing is masked. The whole request
// counts, the model's description of it too, since a private key block
// that starts there masks everything after it.
func permissionMasked(req state.Request) bool {
	req.Status = state.RequestPending
	m := permissionBody(req, chat.Limit, "")
	// The card masks before it cuts, so the request's own texts are
	// checked, as well as what the card shows of them.
	_, _, text, _ := permissionInput(req)
	var in struct {
		Description string `json:"description"`
		FilePath    string `json:"file_path"`
	}
	_ = json.Unmarshal(req.ToolInput, &in)
	texts := []string{in.Description + "\n" + in.FilePath + "\n" + text, string(req.ToolInput), req.AgentType, req.ToolName, req.PolicyRule, m.Content}
	for _, f := range m.Files {
		texts = append(texts, string(f.Data))
	}
	for _, s := range suggestions(req) {
		texts = append(texts, suggestionLabel(s))
	}
	return anyMasked(texts...)
}

// unifiedPreview shows an Edit as removed and added lines.
func unifiedPreview(in claudehook.EditInput) string {
	var b strings.Builder
	for _, l := range strings.Split(in.OldString, "\n") {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range strings.Split(in.NewString, "\n") {
		b.WriteString("+" + l + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func applyPermission(id string, req *state.Request, a Action) (Result, error) {
	switch a.Name {
	case "allow", "always", "alwayssel":
		// Only whoever saw the request whole may allow it.
		if !a.Unmasked && permissionMasked(*req) {
			return Result{Notice: maskedNotice}, nil
		}
	}
	switch a.Name {
	case "allow":
		return Result{}, decide(req, claudehook.Decision{Behavior: "allow"}, "✅ **Allowed** by "+a.User)
	case "always":
		if req.Keys != "" {
			return Result{}, keysAlways(req, a.User)
		}
		if len(suggestions(*req)) == 0 {
			return Result{}, ErrUnknownAction
		}
		req.Step = "always"
		return Result{}, nil
	case "back":
		req.Step = ""
		return Result{}, nil
	case "alwayssel":
		// Only a choice the menu on the card offered: the menu is shown
		// in the "always" step, and its values are exactly alwaysChoices.
		if req.Step != "always" || len(a.Values) != 1 {
			return Result{}, ErrUnknownAction
		}
		i := slices.IndexFunc(alwaysChoices(*req), func(c alwaysChoice) bool { return c.value == a.Values[0] })
		if i < 0 {
			return Result{}, ErrUnknownAction
		}
		c := alwaysChoices(*req)[i]
		u := c.update
		u.Destination = scopes[c.scope].dest
		outcome := fmt.Sprintf("✅ **Allowed**, and %s (%s), by %s", escapeMarkdown(suggestionLabel(u)), scopes[c.scope].label, a.User)
		return Result{}, decide(req, claudehook.Decision{Behavior: "allow", UpdatedPermissions: []claudehook.PermissionUpdate{u}}, outcome)
	case "deny":
		return Result{}, decide(req, claudehook.Decision{Behavior: "deny", Message: DenyMessage}, "⛔ **Denied** by "+a.User)
	case "denymsg":
		who := agentOf(*req) // keys.go
		return Result{Modal: &chat.Modal{CustomID: cid(req.Instance, id, "denytext"), Title: "Deny, and tell " + who + " what to do",
			Inputs: []chat.TextInput{{CustomID: "text", Label: "What should " + who + " do instead?", Paragraph: true, Required: true, MaxLength: 4000}}}}, nil
	case "denytext":
		text := strings.TrimSpace(a.Fields["text"])
		if text == "" {
			return Result{Notice: "Nothing was denied: the instructions were empty."}, nil
		}
		return Result{}, decide(req, claudehook.Decision{Behavior: "deny", Message: text}, "⛔ **Denied** by "+a.User+", with instructions:\n> "+oneLine(text, 300))
	}
	return Result{}, ErrUnknownAction
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(redact.String(s), "\n", " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
