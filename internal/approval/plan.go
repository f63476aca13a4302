package approval

import (
	"encoding/json"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Plan sizes: shown whole when it fits the card, else previewed with the
// full text attached; editable in a modal up to Discord's 4000 characters.
const (
	planInline  = 1800
	planPreview = 1400
	planEdit    = 4000
)

func planInput(req state.Request) claudehook.PlanInput {
	var in claudehook.PlanInput
	_ = json.Unmarshal(req.ToolInput, &in)
	return in
}

// maskedPlanWarning heads a plan card that redaction would mask. The plan
// can still be approved here: approving runs nothing of its text (every
// command it leads to asks again, on a card of its own), and a mode
// granted does not depend on what the plan says.
const maskedPlanWarning = "⚠️ Part of this plan was masked as a secret, so the card does not show all of it: read it in the terminal before you approve."

// planMasked reports whether redaction would mask the plan, as shown or
// as attached.
func planMasked(in claudehook.PlanInput) bool {
	return anyMasked(in.Plan, chat.Markdown(strings.TrimSpace(in.Plan)))
}

func renderPlan(id string, req state.Request, room int) chat.Message {
	in := planInput(req)
	m := chat.Message{}
	// Masked before it is cut to the card's room.
	plan := redact.String(chat.Markdown(strings.TrimSpace(in.Plan)))
	who := agentOf(req) // keys.go
	title := "📋 **" + who + "'s plan**\n\n"
	// Whether the plan is attached is decided as on the pending card,
	// which is posted with its files; a closed card is an edit of it.
	if len([]rune(plan)) > planInline {
		title = "📋 **" + who + "'s plan** (the full plan is attached)\n\n"
		m.Files = []chat.File{{Name: "plan.md", Data: []byte(in.Plan)}}
	}
	masked := req.Status == state.RequestPending && planMasked(in)
	if masked {
		title = maskedPlanWarning + "\n" + title
	}
	limit := room - len([]rune(title))
	if m.Files != nil {
		limit = min(limit, planPreview)
	}
	if len([]rune(plan)) > limit {
		// The first chunk: cut at a paragraph or line, fences closed.
		const more = "\n…"
		if chunks := chat.Chunk(plan, max(limit-len([]rune(more)), 1)); len(chunks) > 0 {
			plan = chunks[0] + more
		}
	}
	m.Content = title + plan
	if req.Status != state.RequestPending {
		return m
	}
	if req.Keys != "" {
		// Codex's "Implement this plan?" dialog: Yes, implement it (in
		// Default mode), or No, stay in Plan mode.
		m.Rows = []chat.Row{{Buttons: []chat.Button{
			{Label: "Yes, implement this plan", CustomID: cid(req.Instance, id, "plandefault"), Style: chat.Success},
			{Label: "Keep planning…", CustomID: cid(req.Instance, id, "plankeep"), Style: chat.Secondary},
		}}}
		return m
	}
	buttons := []chat.Button{
		{Label: "Approve — accept edits", CustomID: cid(req.Instance, id, "planaccept"), Style: chat.Success},
		{Label: "Approve — ask before edits", CustomID: cid(req.Instance, id, "plandefault"), Style: chat.Primary},
		{Label: "Keep planning…", CustomID: cid(req.Instance, id, "plankeep"), Style: chat.Secondary},
	}
	// The edit box would hold the masked text, and saving it would put the
	// mask in the plan in place of the secret.
	if len([]rune(in.Plan)) <= planEdit && !masked {
		buttons = append(buttons, chat.Button{Label: "Edit & approve…", CustomID: cid(req.Instance, id, "planedit"), Style: chat.Secondary})
	}
	m.Rows = []chat.Row{{Buttons: buttons}}
	return m
}

// approvePlan echoes the input (Claude ignores a bare allow on a plan) and
// sets the mode the session continues in.
func approvePlan(req *state.Request, input json.RawMessage, mode, outcome string) error {
	return decide(req, claudehook.Decision{Behavior: "allow", UpdatedInput: input,
		UpdatedPermissions: []claudehook.PermissionUpdate{{Type: "setMode", Mode: mode, Destination: "session"}}}, outcome)
}

func applyPlan(id string, req *state.Request, a Action) (Result, error) {
	if req.Keys != "" {
		switch a.Name {
		case "plandefault":
			return Result{}, decide(req, claudehook.Decision{Behavior: "allow"}, "✅ **Plan approved** by "+a.User+"; Codex switches to Default mode and implements it.")
		case "planaccept", "planedit", "planedited":
			return Result{}, ErrUnknownAction
		}
	}
	switch a.Name {
	case "planaccept":
		return Result{}, approvePlan(req, req.ToolInput, "acceptEdits", "✅ **Plan approved** by "+a.User+"; Claude accepts edits from here.")
	case "plandefault":
		return Result{}, approvePlan(req, req.ToolInput, "default", "✅ **Plan approved** by "+a.User+"; Claude asks before edits.")
	case "plankeep":
		return Result{Modal: &chat.Modal{CustomID: cid(req.Instance, id, "plantext"), Title: "Keep planning",
			Inputs: []chat.TextInput{{CustomID: "text", Label: "What should " + agentOf(*req) + " change?", Paragraph: true, Required: true, MaxLength: 4000}}}}, nil
	case "plantext":
		text := strings.TrimSpace(a.Fields["text"])
		if text == "" {
			return Result{Notice: "Nothing sent: the feedback was empty."}, nil
		}
		return Result{}, decide(req, claudehook.Decision{Behavior: "deny", Message: text}, "🔄 **Keep planning**, said "+a.User+":\n> "+oneLine(text, 300))
	case "planedit":
		in := planInput(*req)
		if len([]rune(in.Plan)) > planEdit {
			return Result{Notice: "This plan is too long to edit in Discord; approve it, or keep planning."}, nil
		}
		if planMasked(in) {
			return Result{Notice: "Part of this plan was masked as a secret, so it cannot be edited in Discord; approve it, or keep planning."}, nil
		}
		return Result{Modal: &chat.Modal{CustomID: cid(req.Instance, id, "planedited"), Title: "Edit the plan, then approve",
			Inputs: []chat.TextInput{{CustomID: "plan", Label: "Plan", Paragraph: true, Required: true, MaxLength: planEdit, Value: in.Plan}}}}, nil
	case "planedited":
		plan := a.Fields["plan"]
		if strings.TrimSpace(plan) == "" {
			return Result{Notice: "Not approved: the plan was empty."}, nil
		}
		var input map[string]any
		if err := json.Unmarshal(req.ToolInput, &input); err != nil {
			return Result{}, err
		}
		input["plan"] = plan
		updated, err := json.Marshal(input)
		if err != nil {
			return Result{}, err
		}
		return Result{}, approvePlan(req, updated, "default", "✏️ **Plan edited and approved** by "+a.User+"; Claude asks before edits.")
	}
	return Result{}, ErrUnknownAction
}
