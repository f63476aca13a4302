package approval

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// gen makes hostile but valid tool inputs: every length that sits on or
// around a Discord limit, in scripts of one and two cells, with markdown.
type gen struct{ r *rand.Rand }

var alphabets = []string{
	"abcdefghij klmnop",
	"日本語の文字列テスト",
	"😀🔥✅⚠️👍🏽",
	"```*_~|>#[]()<@\\\n",
	"          ",
	"a\nb\n\n",
}

var sizes = []int{0, 1, 2, 44, 45, 46, 79, 80, 81, 99, 100, 101, 149, 151, 300, 550, 700, 900, 1400, 1401, 1999, 2000, 2001, 4000, 4001, 9000}

func (g gen) str() string { return g.strOf(sizes) }

// smallSizes are for the fields of a question, which multiply: every limit
// a question field meets is below 150, and its text is clipped at 2,000.
var smallSizes = []int{0, 1, 2, 44, 45, 46, 79, 80, 81, 99, 100, 101, 149, 151, 300, 2001}

func (g gen) small() string { return g.strOf(smallSizes) }

func (g gen) strOf(sizes []int) string {
	n := sizes[g.r.IntN(len(sizes))]
	a := []rune(alphabets[g.r.IntN(len(alphabets))])
	b := []rune(alphabets[g.r.IntN(len(alphabets))])
	out := make([]rune, n)
	for i := range out {
		if g.r.IntN(4) == 0 {
			out[i] = b[g.r.IntN(len(b))]
		} else {
			out[i] = a[g.r.IntN(len(a))]
		}
	}
	return string(out)
}

// nonEmpty is a str that Claude Code would not send empty.
func (g gen) nonEmpty() string {
	if s := g.str(); strings.TrimSpace(s) != "" {
		return s
	}
	return "x" + g.str()
}

func (g gen) suggestions() json.RawMessage {
	var sug []claudehook.PermissionUpdate
	for range g.r.IntN(9) {
		switch g.r.IntN(3) {
		case 0:
			sug = append(sug, claudehook.PermissionUpdate{Type: "addRules", Behavior: "allow", Rules: []claudehook.Rule{{ToolName: "Bash", RuleContent: g.str()}, {ToolName: g.nonEmpty()}}})
		case 1:
			sug = append(sug, claudehook.PermissionUpdate{Type: "setMode", Mode: g.nonEmpty()})
		default:
			sug = append(sug, claudehook.PermissionUpdate{Type: "addDirectories", Directories: []string{g.str(), g.str()}})
		}
	}
	if len(sug) == 0 {
		return nil
	}
	b, _ := json.Marshal(sug)
	return b
}

func (g gen) request() state.Request {
	req := state.Request{Instance: "inst01", Status: state.RequestPending, AgentType: []string{"", "general-purpose", g.str()}[g.r.IntN(3)]}
	var in any
	switch g.r.IntN(6) {
	case 0:
		req.ToolName, in = "Bash", claudehook.BashInput{Command: g.nonEmpty(), Description: g.str()}
	case 1:
		req.ToolName, in = "Write", claudehook.WriteInput{FilePath: g.nonEmpty(), Content: g.str()}
	case 2:
		req.ToolName, in = "Edit", claudehook.EditInput{FilePath: g.nonEmpty(), OldString: g.str(), NewString: g.str()}
	case 3:
		req.ToolName, in = []string{"WebFetch", "mcp__my_server__do_thing", g.nonEmpty()}[g.r.IntN(3)], map[string]string{"url": g.str(), "prompt": g.str()}
	case 4:
		req.ToolName = toolAsk
		var ask claudehook.AskInput
		for qi := range 1 + g.r.IntN(6) {
			q := claudehook.Question{Question: fmt.Sprintf("%d %s", qi, g.small()), Header: g.small(), MultiSelect: g.r.IntN(2) == 0}
			for oi := range 1 + g.r.IntN(6) {
				q.Options = append(q.Options, claudehook.QuestionOption{Label: fmt.Sprintf("%d %s", oi, g.small()), Description: g.small()})
			}
			ask.Questions = append(ask.Questions, q)
		}
		in = ask
	default:
		req.ToolName, in = toolPlan, claudehook.PlanInput{Plan: g.nonEmpty(), PlanFilePath: g.str()}
	}
	req.ToolInput, _ = json.Marshal(in)
	if req.ToolName != toolAsk && req.ToolName != toolPlan {
		req.Suggestions = g.suggestions()
	}
	return req
}

// checkAll asserts every Discord limit on the card and on every modal and
// every next state its components lead to, and returns how many it checked.
func checkAll(t *testing.T, g gen, req state.Request, depth int) int {
	t.Helper()
	card := Render(reqID, req)
	if err := chat.CheckMessage(card); err != nil {
		t.Fatalf("%s card (status %s, step %q) breaks Discord's limits: %v\ninput: %.300s", req.ToolName, req.Status, req.Step, err, req.ToolInput)
	}
	checked := 1
	if depth == 0 || req.Status != state.RequestPending {
		return checked
	}
	// Every component of the card, clicked or chosen.
	var actions []Action
	for _, row := range card.Rows {
		for _, b := range row.Buttons {
			d, _ := chat.DecodeID(b.CustomID)
			actions = append(actions, Action{Name: d.Args[1], Args: d.Args[2:]})
		}
		if s := row.Select; s != nil {
			d, _ := chat.DecodeID(s.CustomID)
			for _, o := range s.Options {
				actions = append(actions, Action{Name: d.Args[1], Args: d.Args[2:], Values: []string{o.Value}})
			}
		}
	}
	// A sample of them: the menus of depth 2 multiply fast.
	g.r.Shuffle(len(actions), func(i, j int) { actions[i], actions[j] = actions[j], actions[i] })
	for _, a := range actions[:min(len(actions), 4)] {
		a.User = "<@100000000000000002>"
		next := req
		next.Answers = map[string]string{}
		for k, v := range req.Answers {
			next.Answers[k] = v
		}
		res, err := Apply(reqID, &next, a)
		if err != nil {
			t.Fatalf("%s: %+v on a component the card offered: %v", req.ToolName, a, err)
		}
		if m := res.Modal; m != nil {
			if err := chat.CheckModal(*m); err != nil {
				t.Fatalf("%s: modal of %q breaks Discord's limits: %v", req.ToolName, a.Name, err)
			}
			d, _ := chat.DecodeID(m.CustomID)
			fields := map[string]string{}
			for _, in := range m.Inputs {
				fields[in.CustomID] = g.nonEmpty()
			}
			if _, err := Apply(reqID, &next, Action{Name: d.Args[1], Args: d.Args[2:], Fields: fields, User: a.User}); err != nil {
				t.Fatalf("%s: submitting %q: %v", req.ToolName, d.Args[1], err)
			}
		}
		checked += checkAll(t, g, next, depth-1)
	}
	return checked
}

// TestEveryCardFitsDiscordLimits renders random hostile requests of every
// card kind, in every state their components lead to, and closed in every
// way, and checks each message and modal against Discord's rules.
func TestEveryCardFitsDiscordLimits(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(8, 5))}
	checked := 0
	for range 150 {
		req := g.request()
		checked += checkAll(t, g, req, 2)
		for _, st := range []string{state.RequestTerminal, state.RequestExpired, state.RequestInterrupted, state.RequestFailed} {
			closed := req
			closed.Status = st
			checked += checkAll(t, g, closed, 0)
		}
	}
	t.Logf("%d cards checked", checked)
}

// TestMeasuredLongCards pins the cases measured against Discord.
func TestMeasuredLongCards(t *testing.T) {
	for name, in := range map[string]any{
		"description 700": claudehook.BashInput{Command: strings.Repeat("x", 1500), Description: strings.Repeat("d", 700)},
		"path 900 write":  claudehook.WriteInput{FilePath: "/" + strings.Repeat("p", 900), Content: strings.Repeat("c\n", 900)},
		"path 900 edit":   claudehook.EditInput{FilePath: "/" + strings.Repeat("p", 900), OldString: "a", NewString: strings.Repeat("b", 3000)},
	} {
		req := state.Request{Instance: "inst01", Status: state.RequestPending, ToolName: map[bool]string{true: "Bash"}[strings.HasPrefix(name, "desc")]}
		if req.ToolName == "" {
			req.ToolName = map[bool]string{true: "Write", false: "Edit"}[strings.HasSuffix(name, "write")]
		}
		req.ToolInput, _ = json.Marshal(in)
		if err := chat.CheckMessage(Render(reqID, req)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A plan too long to edit in a modal gets no modal, even on a crafted click.
func TestPlanEditRefusesAPlanTooLongForTheModal(t *testing.T) {
	req := state.Request{Instance: "inst01", Status: state.RequestPending, ToolName: toolPlan}
	req.ToolInput, _ = json.Marshal(claudehook.PlanInput{Plan: strings.Repeat("x", planEdit+1)})
	res, err := Apply(reqID, &req, Action{Name: "planedit"})
	if err == nil && res.Modal != nil {
		if cerr := chat.CheckModal(*res.Modal); cerr != nil {
			t.Fatalf("modal opened with an over-long value: %v", cerr)
		}
	}
}

func TestQuestionWithManyAnswersClosesWithinLimits(t *testing.T) {
	var ask claudehook.AskInput
	req := state.Request{Instance: "inst01", Status: state.RequestPending, ToolName: toolAsk, Answers: map[string]string{}}
	for i := range 12 {
		q := claudehook.Question{Question: strconv.Itoa(i) + strings.Repeat("q", 300), Options: []claudehook.QuestionOption{{Label: strings.Repeat("l", 300)}}}
		ask.Questions = append(ask.Questions, q)
	}
	req.ToolInput, _ = json.Marshal(ask)
	for i := range 12 {
		if _, err := Apply(reqID, &req, Action{Name: "qtext", Args: []string{strconv.Itoa(i)}, Fields: map[string]string{"text": strings.Repeat("a", 4000)}, User: "<@1>"}); err != nil {
			t.Fatal(err)
		}
	}
	if req.Status != state.RequestDecided {
		t.Fatalf("status %s", req.Status)
	}
	if err := chat.CheckMessage(Render(reqID, req)); err != nil {
		t.Fatal(err)
	}
}
