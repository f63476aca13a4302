package approval

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/state"
)

// otherValue is the select option that asks for free text.
const otherValue = "other"

// maxQuestionRows leaves one of Discord's five rows for Submit.
const maxQuestionRows = 4

func askInput(req state.Request) claudehook.AskInput {
	var in claudehook.AskInput
	_ = json.Unmarshal(req.ToolInput, &in)
	return in
}

// usesButtons: a single-select question with few options gets buttons.
func usesButtons(q claudehook.Question) bool { return !q.MultiSelect && len(q.Options) <= 4 }

func renderQuestion(id string, req state.Request) chat.Message {
	in := askInput(req)
	var b strings.Builder
	b.WriteString("❓ **" + agentOf(req) + " asks**") // keys.go
	if req.AgentType != "" {
		b.WriteString(" (" + req.AgentType + " agent)")
	}
	for i, q := range in.Questions {
		fmt.Fprintf(&b, "\n\n**%d. %s** %s", i+1, q.Header, q.Question)
		if q.MultiSelect {
			b.WriteString(" *(choose any)*")
		}
		for _, o := range q.Options {
			b.WriteString("\n> **" + o.Label + "**")
			if o.Description != "" {
				b.WriteString(" — " + o.Description)
			}
		}
		if a, ok := req.Answers[q.Question]; ok && req.Status == state.RequestPending {
			b.WriteString("\n→ " + a)
		}
	}
	m := chat.Message{Content: fitContent(b.String(), "")}
	if req.Status != state.RequestPending {
		return m
	}
	for i, q := range in.Questions {
		if i == maxQuestionRows {
			break
		}
		qi := strconv.Itoa(i)
		if usesButtons(q) {
			var buttons []chat.Button
			for oi, o := range q.Options {
				style := chat.Secondary
				if req.Answers[q.Question] == o.Label {
					style = chat.Primary
				}
				buttons = append(buttons, chat.Button{Label: optionLabel(o, oi, chat.MaxButtonLabel), CustomID: cid(req.Instance, id, "qb", qi, strconv.Itoa(oi)), Style: style})
			}
			buttons = append(buttons, chat.Button{Label: "Other…", CustomID: cid(req.Instance, id, "qo", qi), Style: chat.Secondary})
			m.Rows = append(m.Rows, chat.Row{Buttons: buttons})
			continue
		}
		sel := &chat.Select{CustomID: cid(req.Instance, id, "qs", qi), Placeholder: short(fmt.Sprintf("%d. %s", i+1, q.Header), 100), MinValues: 1, MaxValues: 1}
		for oi, o := range q.Options {
			if oi == chat.MaxOptions-1 {
				break // the last place is Other…'s
			}
			desc := strings.TrimSpace(o.Description)
			if desc == "" {
				desc = fmt.Sprintf("option %d", oi+1) // Discord rejects an empty description
			}
			sel.Options = append(sel.Options, chat.Option{Label: optionLabel(o, oi, chat.MaxOptionText), Value: strconv.Itoa(oi), Description: short(desc, chat.MaxOptionText)})
		}
		sel.Options = append(sel.Options, chat.Option{Label: "Other…", Value: otherValue, Description: "type an answer"})
		if q.MultiSelect {
			sel.MaxValues = len(sel.Options)
		}
		m.Rows = append(m.Rows, chat.Row{Select: sel})
	}
	last := []chat.Button{}
	if len(in.Questions) > 1 {
		last = append(last, chat.Button{Label: "Submit", CustomID: cid(req.Instance, id, "submit"), Style: chat.Success})
	}
	last = append(last, chat.Button{Label: "Reply in chat instead…", CustomID: cid(req.Instance, id, "chat"), Style: chat.Secondary})
	m.Rows = append(m.Rows, chat.Row{Buttons: last})
	return m
}

// optionLabel is an option's label within n characters, never empty.
func optionLabel(o claudehook.QuestionOption, i, n int) string {
	if strings.TrimSpace(o.Label) == "" {
		return fmt.Sprintf("Option %d", i+1)
	}
	return short(o.Label, n)
}

func short(s string, n int) string {
	if r := []rune(redact.String(s)); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func applyQuestion(id string, req *state.Request, a Action) (Result, error) {
	in := askInput(*req)
	question := func() (claudehook.Question, bool) {
		qi, ok := arg(a, 0)
		if !ok || qi >= len(in.Questions) {
			return claudehook.Question{}, false
		}
		return in.Questions[qi], true
	}
	if req.Answers == nil {
		req.Answers = map[string]string{}
	}
	switch a.Name {
	case "qb":
		q, ok := question()
		oi, ok2 := arg(a, 1)
		if !ok || !ok2 || oi >= len(q.Options) {
			return Result{}, ErrUnknownAction
		}
		req.Answers[q.Question] = q.Options[oi].Label
	case "qs":
		q, ok := question()
		if !ok {
			return Result{}, ErrUnknownAction
		}
		var labels []string
		for _, v := range a.Values {
			if v == otherValue {
				continue
			}
			oi, err := strconv.Atoi(v)
			if err != nil || oi < 0 || oi >= len(q.Options) {
				return Result{}, ErrUnknownAction
			}
			labels = append(labels, q.Options[oi].Label)
		}
		if slices.Contains(a.Values, otherValue) {
			// Keep the labels chosen with "Other…"; the typed text joins them.
			req.Step = "partial:" + a.Args[0] + ":" + strings.Join(labels, "\x1f")
			return Result{Modal: otherModal(req, id, a.Args[0], q)}, nil
		}
		req.Answers[q.Question] = strings.Join(labels, ", ")
	case "qo":
		q, ok := question()
		if !ok {
			return Result{}, ErrUnknownAction
		}
		req.Step = ""
		return Result{Modal: otherModal(req, id, a.Args[0], q)}, nil
	case "qtext":
		q, ok := question()
		text := strings.TrimSpace(a.Fields["text"])
		if !ok || text == "" {
			return Result{Notice: "No answer recorded: the text was empty."}, nil
		}
		answer := text
		if partial, found := strings.CutPrefix(req.Step, "partial:"+a.Args[0]+":"); found && partial != "" {
			answer = strings.Join(append(strings.Split(partial, "\x1f"), text), ", ")
		}
		req.Step = ""
		req.Answers[q.Question] = answer
	case "submit":
		if len(req.Answers) == 0 {
			return Result{Notice: "Answer at least one question first."}, nil
		}
		return Result{}, finishQuestions(req, in, a.User)
	case "chat":
		return Result{Modal: &chat.Modal{CustomID: cid(req.Instance, id, "chattext"), Title: "Reply in chat instead",
			Inputs: []chat.TextInput{{CustomID: "text", Label: "Your reply to " + agentOf(*req), Paragraph: true, Required: true, MaxLength: 4000}}}}, nil
	case "chattext":
		text := strings.TrimSpace(a.Fields["text"])
		if text == "" {
			return Result{Notice: "Nothing sent: the reply was empty."}, nil
		}
		return Result{}, decide(req, claudehook.Decision{Behavior: "deny", Message: text}, "💬 **Replied in chat** by "+a.User+":\n> "+oneLine(text, 300))
	default:
		return Result{}, ErrUnknownAction
	}
	for _, q := range in.Questions {
		if _, ok := req.Answers[q.Question]; !ok {
			return Result{}, nil // more to answer
		}
	}
	return Result{}, finishQuestions(req, in, a.User)
}

func otherModal(req *state.Request, id, qi string, q claudehook.Question) *chat.Modal {
	return &chat.Modal{CustomID: cid(req.Instance, id, "qtext", qi), Title: short("Answer: "+q.Header, 45),
		Inputs: []chat.TextInput{{CustomID: "text", Label: short(q.Question, 45), Paragraph: true, Required: true, MaxLength: 4000}}}
}

// finishQuestions answers: the original input plus answers keyed by the
// exact question text (Claude ignores answers under any other key).
func finishQuestions(req *state.Request, in claudehook.AskInput, user string) error {
	var input map[string]any
	if err := json.Unmarshal(req.ToolInput, &input); err != nil {
		return fmt.Errorf("question input: %w", err)
	}
	input["answers"] = req.Answers
	updated, err := json.Marshal(input)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("📝 **Answered** by " + user + ":")
	for _, q := range in.Questions {
		if a, ok := req.Answers[q.Question]; ok {
			fmt.Fprintf(&b, "\n• %s → **%s**", oneLine(q.Question, 120), oneLine(a, 200))
		}
	}
	return decide(req, claudehook.Decision{Behavior: "allow", UpdatedInput: updated}, b.String())
}
