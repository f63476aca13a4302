package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/guard"
	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/schedule"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/voice"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// Every control is registered with a guard, and an Inert one says why.
func TestEveryControlNamesItsGuard(t *testing.T) {
	for k, c := range components {
		if !c.policy.Valid() {
			t.Errorf("%v has no guard", k)
		}
		if c.policy == guard.Inert && strings.TrimSpace(c.why) == "" {
			t.Errorf("%v is inert without saying why", k)
		}
		if (c.click == nil) == (c.submit == nil) && k.kind != approval.IDKind {
			t.Errorf("%v answers both or neither of a click and a form", k)
		}
	}
}

// rendered is a control ccbridge draws, as it draws it, or a link button
// (url set), which is no control: it opens a page and ccbridge answers
// nothing for it.
type rendered struct {
	what     string
	customID string
	form     bool   // a form's custom_id: its submit is answered
	url      string // a link button's
}

// renderedControls draws every message and form with controls that the
// router, the cards and the panel make, and collects their custom_ids.
func renderedControls(t *testing.T, r *Router, l *log) []rendered {
	t.Helper()
	var out []rendered
	rows := func(what string, rs []chat.Row) {
		if len(rs) == 0 {
			t.Errorf("%s drew no controls", what)
		}
		for _, row := range rs {
			for _, b := range row.Buttons {
				out = append(out, rendered{what + " " + b.Label, b.CustomID, false, b.URL})
			}
			if row.Select != nil {
				out = append(out, rendered{what + " menu", row.Select.CustomID, false, ""})
			}
		}
	}
	form := func(what string, m chat.Modal) { out = append(out, rendered{what, m.CustomID, true, ""}) }
	now := time.Now()
	key := "home-api"

	rows("/screen", screenReply("inst1", key, "", "❯ hi", dialogHash(""), now).Rows)
	two := session.Dialog{Text: "Trust?", Choices: []string{"Yes", "No"}, Hash: "fedcba9876543210"}
	rows("dialog", dialogMessage("inst1", key, "Claude", two, now).Rows)
	many := session.Dialog{Text: "Theme?", Hash: "fedcba9876543210"}
	for i := range 7 {
		many.Choices = append(many.Choices, fmt.Sprint(i))
	}
	rows("dialog", dialogMessage("inst1", key, "Claude", many, now).Rows)
	// /open's folder picker, where there is no autocomplete (Telegram).
	roots := t.TempDir()
	if err := os.Mkdir(filepath.Join(roots, "tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	tgServer := config.Server{Name: "phone", Platform: config.PlatformTelegram, OpenRoots: []string{roots}}
	pick, ok := r.folderPicker(target{rt: route{server: tgServer}}, "", "")
	if !ok {
		t.Fatal("/open on Telegram offered no folders")
	}
	rows("/open's folder picker", pick.Rows)

	// Landing: /diff's Merge this, /commit in a checkout, /discard, and
	// the removal offered after a merge; the commit forms.
	fl := &fakeLander{head: "c0ffee1234567"}
	r.opt.Land = fl
	tkey := threadWithTree(t, r)
	tg, _ := r.resolve("home", thread, channel)
	lt, _ := r.landTarget(tg)
	rows("/diff", r.diffReply(context.Background(), chat.CommandEvent{Server: "home", ChannelID: thread, User: chat.User{ID: owner}}, tg, lt).Rows)
	// With the web view on, /diff links the browser beside its control.
	r.opt.Web = newFakeWeb(l)
	rows("/diff with the web view", r.diffReply(context.Background(), chat.CommandEvent{Server: "home", ChannelID: thread, User: chat.User{ID: owner}}, tg, lt).Rows)
	chTarget, _ := r.resolve("home", channel, "")
	commit, _ := r.runLand(chat.CommandEvent{Server: "home", ChannelID: channel, Name: "commit", User: chat.User{ID: owner}}, chTarget)
	rows("/commit in the checkout", commit.Rows)
	rows("/discard", r.lander().DiscardQuestion(key, lt, worktree.Diff{Stat: "x", Patch: "+x"}, "", "o").Rows)
	fl.patch = " " // nothing uncommitted: the merge offers the removal
	merged := r.lander().Merge(context.Background(), tkey, lt, chat.User{ID: owner}, "")
	if len(merged.Rows) == 0 {
		t.Fatalf("/merge offered no removal: %q", merged.Content)
	}
	rows("/merge", merged.Rows)
	fl.patch = ""
	form("/commit form", r.lander().CommitModal(tkey, "commit", ""))
	form("commit anyway form", r.lander().CommitModal(key, "commitforce", ""))

	// A kept worktree's message, and its confirmation step.
	rows("kept worktree", r.keptRows(tkey, "fp1"))
	var confirm chat.Message
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: r.wtID(tkey, "delete", "fp1"), Content: "📦 kept"}),
		updated{fakeResponder{l: l}, &confirm})
	rows("Delete anyway's question", confirm.Rows)

	// /sessions, /schedules, voice review, Deliver anyway, Continue at reset.
	for _, a := range []string{"take", "resume", "fork", "here"} {
		out = append(out, rendered{"/sessions " + a, r.ssID(a, "c1"), false, ""})
	}
	if _, err := r.opt.Registry.Schedules.Create(context.Background(), "s1", state.Schedule{Server: "home", ChannelID: channel, Prompt: "p", When: "in 1h", Next: now.Add(time.Hour), Owner: owner}); err != nil {
		t.Fatal(err)
	}
	rows("/schedules", r.scheduleList(schedule.Scope{Server: "home", Project: channel}, "").Rows)
	vb, err := r.voiceButtons("v1")
	if err != nil {
		t.Fatal(err)
	}
	rows("voice review", vb)
	var voiceForm chat.Modal
	var at time.Time
	r.voices.Put("v1", &voice.Review[target]{Note: chat.MessageEvent{Author: chat.User{ID: owner}}, Words: "w", Expires: now.Add(time.Hour)})
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: buttonOf(t, chat.Message{Rows: vb}, "Edit…")}),
		modalAt{fakeResponder{l: l}, &voiceForm, &at})
	form("voice Edit… form", voiceForm)
	late, _ := chat.ID{Instance: "inst1", Kind: lateKind, Args: []string{"1300000000000000101"}}.Encode()
	out = append(out, rendered{"Deliver anyway", late, false, ""}) // late.go offer
	resume, _ := chat.ID{Instance: "inst1", Kind: state.ResumeKind, Args: []string{key}}.Encode()
	out = append(out, rendered{"Continue at reset", resume, false, ""}) // internal/hook/limit.go

	// The control panel, with buttons and with a menu.
	for _, projects := range []int{1, 8} {
		cfg := *r.opt.Config
		srv := cfg.Servers[0]
		srv.Projects = nil
		for i := range projects {
			srv.Projects = append(srv.Projects, r.opt.Config.Servers[0].Projects[0])
			srv.Projects[i].Name = fmt.Sprint("p", i)
		}
		cfg.Servers = []config.Server{srv}
		p := &panel.Panel{Config: &cfg, Store: r.opt.Store, Registry: r.opt.Registry, Sessions: r.opt.Sessions, Trees: noTrees{}, Instance: "inst1", Web: true}
		rows(fmt.Sprint("panel of ", projects), p.Render(context.Background(), "home").Rows)
	}

	// Cards: every step of every kind, and the forms they open.
	for _, c := range cardSteps(t) {
		if c.modal != nil {
			form("card form "+c.what, *c.modal)
		} else {
			rows("card "+c.what, c.m.Rows)
		}
	}
	return out
}

// noTrees is git that finds no repository.
type noTrees struct{}

func (noTrees) Root(context.Context, string) (string, error) {
	return "", errors.New("not a repository")
}
func (noTrees) Summary(context.Context, string, string) (worktree.Summary, error) {
	return worktree.Summary{}, errors.New("not a repository")
}
func (noTrees) Orphans(context.Context, string, map[string]bool) ([]worktree.Tree, error) {
	return nil, nil
}

// cardStep is a card drawn at some step, or a form it opened.
type cardStep struct {
	what  string
	m     chat.Message
	modal *chat.Modal
}

// cardSteps draws the cards of each kind of request and follows each of
// their controls (a step, a form) two levels deep.
func cardSteps(t *testing.T) []cardStep {
	t.Helper()
	bash, _ := json.Marshal(claudehook.BashInput{Command: "make test"})
	sug, _ := json.Marshal([]claudehook.PermissionUpdate{{Type: "addRules", Behavior: "allow", Rules: []claudehook.Rule{{ToolName: "Bash", RuleContent: "make *"}}}})
	plan, _ := json.Marshal(map[string]any{"plan": "1. test", "planFilePath": "/tmp/p.md"})
	ask, _ := json.Marshal(map[string]any{"questions": []map[string]any{{"question": "Which?", "header": "Pick", "multiSelect": false,
		"options": []map[string]any{{"label": "A", "description": "a"}, {"label": "B", "description": "b"}}}}})
	askMany, _ := json.Marshal(map[string]any{"questions": []map[string]any{{"question": "Which?", "header": "Pick", "multiSelect": true,
		"options": []map[string]any{{"label": "A", "description": "a"}, {"label": "B", "description": "b"}}}}})
	var out []cardStep
	for _, req := range []state.Request{
		{ToolName: "Bash", ToolInput: bash, Suggestions: sug},
		{ToolName: "ExitPlanMode", ToolInput: plan},
		{ToolName: "AskUserQuestion", ToolInput: ask},
		{ToolName: "AskUserQuestion", ToolInput: askMany},
	} {
		req.Instance, req.Status = "inst1", state.RequestPending
		var walk func(req state.Request, depth int)
		walk = func(req state.Request, depth int) {
			m := approval.Render("r1", req)
			out = append(out, cardStep{what: req.ToolName + " " + req.Step, m: m})
			if depth == 0 {
				return
			}
			for _, row := range m.Rows {
				var ids []string
				var values []string
				for _, b := range row.Buttons {
					ids = append(ids, b.CustomID)
				}
				if row.Select != nil {
					ids = append(ids, row.Select.CustomID)
					if len(row.Select.Options) > 0 {
						values = []string{row.Select.Options[0].Value}
					}
				}
				for _, s := range ids {
					id, _ := chat.DecodeID(s)
					next := req
					res, err := approval.Apply("r1", &next, approval.Action{Name: id.Args[1], Args: id.Args[2:], Values: values, User: "<@1>"})
					switch {
					case err != nil || next.Status != state.RequestPending:
					case res.Modal != nil:
						out = append(out, cardStep{what: req.ToolName + " " + id.Args[1], modal: res.Modal})
					default:
						walk(next, depth-1)
					}
				}
			}
		}
		walk(req, 2)
	}
	return out
}

// TestEveryRenderedControlIsRegistered: whatever the router, the cards and
// the panel draw is answered by an entry that names its guard.
func TestEveryRenderedControlIsRegistered(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	r.opt.Panel = fakePanel{}
	controls := renderedControls(t, r, l)
	kinds := map[string]bool{}
	linked := 0
	for _, c := range controls {
		if c.url != "" {
			// A link acts on nothing: it must carry no custom_id, which
			// a click would deliver to a handler.
			if c.customID != "" {
				t.Errorf("the link %s carries the custom_id %q", c.what, c.customID)
			}
			linked++
			continue
		}
		id, err := chat.DecodeID(c.customID)
		if err != nil {
			t.Errorf("%s: %q: %v", c.what, c.customID, err)
			continue
		}
		kinds[id.Kind] = true
		e, ok := r.component(id)
		switch {
		case !ok:
			t.Errorf("%s (%q) is drawn but not registered", c.what, c.customID)
		case c.form && e.submit == nil:
			t.Errorf("the form %s (%q) has no submit registered", c.what, c.customID)
		case !c.form && e.click == nil:
			t.Errorf("%s (%q) has no click registered", c.what, c.customID)
		}
	}
	for k := range components {
		if !kinds[k.kind] {
			t.Errorf("kind %q is registered but nothing drawn here uses it", k.kind)
		}
	}
	if linked == 0 {
		t.Error("no link button was drawn: the web view's are not enumerated")
	}
}

// boundCase is one bound control set up on a message ccbridge drew, and
// how to tell that nothing acted.
type boundCase struct {
	name  string
	ch    string
	msgID string
	m     chat.Message
	id    string
	form  bool
	want  string       // the refusal
	quiet func() error // non-nil when something acted besides the log
}

// TestNoBoundControlActsFromACopyOrAnEdit (security review 3, finding 2)
// walks every bound entry of the table: drawn by ccbridge on a message,
// its control clicked (or its form submitted) from a copy of that message
// (another id, the same face) and from the message edited (same id, other
// text; other labels) does nothing but refuse. The message as drawn
// passes the guard.
func TestNoBoundControlActsFromACopyOrAnEdit(t *testing.T) {
	r, ss, _, l, store := newRouter(t)
	r.guard.Wait = 0 // refusals here are final; waiting for a binding is tested in guard
	r.opt.Panel = fakePanel{}
	fl := &fakeLander{head: "c0ffee1234567"}
	r.opt.Land = fl
	tkey := threadWithTree(t, r)
	ss.setState("stopped")
	ctx := context.Background()
	ext, _ := state.OpenExtras(store.Dir)
	if _, err := r.opt.Registry.Schedules.Create(ctx, "s1", state.Schedule{Server: "home", ChannelID: channel, Prompt: "p", When: "in 1h", Next: time.Now().Add(time.Hour), Owner: owner}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	at := strconv.FormatInt(now.Unix(), 36)
	var cases []boundCase
	for k, c := range components {
		if c.policy != guard.Bound {
			continue
		}
		ch, args := channel, []string{}
		switch k.kind {
		case sessionsKind, schedule.Kind, panel.IDKind:
			args = []string{k.action, map[string]string{sessionsKind: "c1", schedule.Kind: "s1", panel.IDKind: "api"}[k.kind]}
		case voice.Kind:
			args = []string{k.action, "v1"}
			r.voices.Put("v1", &voice.Review[target]{Note: chat.MessageEvent{Author: chat.User{ID: owner}}, Words: "w", Expires: now.Add(time.Hour)})
		case "key":
			args = []string{"home-api", "1", at, dialogHash(session.DialogText("❯ screen text"))}
		case dialogKind:
			args = []string{"home-api", "fedcba9876543210", at, "0"}
		case landKind:
			ch, args = thread, []string{tkey, k.action, "c0ffee123456"}
			if k.action == "discard" {
				args[2] = chat.ShortHash("+x")
			}
		case "wt":
			args = []string{tkey, k.action, "fp1"}
		case lateKind:
			args = []string{"1300000000000000101"}
		case state.ResumeKind:
			args = []string{"home-api"}
		case openPickKind:
			args = []string{"none"}
		case approval.IDKind:
			args = []string{"req-" + k.action, k.action}
		}
		id, err := chat.ID{Instance: "inst1", Kind: k.kind, Args: args}.Encode()
		if err != nil {
			t.Fatal(err)
		}
		m := chat.Message{Content: "what ccbridge drew for " + k.kind + " " + k.action, Rows: []chat.Row{{Buttons: []chat.Button{
			{Label: "Do it", CustomID: id, Style: chat.Primary}, {Label: "Keep", CustomID: r.landID("home-api", "keep"), Style: chat.Secondary}}}}}
		bc := boundCase{name: fmt.Sprintf("%s/%s", k.kind, k.action), ch: ch, m: m, id: id, form: c.click == nil, want: guard.Refusal}
		switch k.kind {
		case approval.IDKind:
			bc.msgID = l.draw("", m, nil)
			req := state.Request{Session: "home-api", Server: "home", ChannelID: ch, Instance: "inst1", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"make"}`),
				Status: state.RequestPending, Created: now, Deadline: now.Add(time.Hour), MessageID: bc.msgID, CardHash: guard.Face(m, nil)}
			if _, err := store.Requests.Create(ctx, args[0], req); err != nil {
				t.Fatal(err)
			}
			bc.want = cardChanged
			bc.quiet = func() error {
				if req, _ := store.Requests.Get(args[0]); req.Status != state.RequestPending {
					return fmt.Errorf("the request is %s", req.Status)
				}
				return nil
			}
		case state.ResumeKind:
			bc.msgID = l.draw("", m, nil)
			ext.Resumes.Update(ctx, "home-api", func(x *state.Resume) error {
				*x = state.Resume{Server: "home", ChannelID: ch, At: now.Add(time.Hour), MessageID: bc.msgID, Face: guard.Face(m, nil)}
				return nil
			})
			bc.quiet = func() error {
				if res, _ := ext.Resumes.Get("home-api"); res.Armed {
					return fmt.Errorf("the offer was armed")
				}
				return nil
			}
		default:
			bc.msgID = l.draw("", m, nil)
			r.bind("home", ch, bc.msgID, m, nil)
		}
		cases = append(cases, bc)
	}
	slices.SortFunc(cases, func(a, b boundCase) int { return strings.Compare(a.name, b.name) })
	if len(cases) < 30 {
		t.Fatalf("only %d bound controls", len(cases))
	}
	act := func(bc boundCase, msgID string, m chat.Message) []string {
		n := len(l.all())
		ev := chat.ComponentEvent{Server: "home", ChannelID: bc.ch, MessageID: msgID, Content: m.Content, Rows: m.Rows, User: chat.User{ID: owner, Name: "o"}, CustomID: bc.id}
		if bc.form {
			r.HandleModal(chat.ModalEvent{Server: ev.Server, ChannelID: ev.ChannelID, MessageID: msgID, Content: m.Content, Rows: m.Rows, User: ev.User,
				CustomID: bc.id, Values: map[string]string{"message": "m", voice.Field: "w", "plan": "1. x", "text": "x", "answer": "x"}}, fakeResponder{l: l, at: msgID})
		} else {
			r.HandleComponent(ev, fakeResponder{l: l, at: msgID})
		}
		time.Sleep(5 * time.Millisecond) // anything started in the background shows up
		return l.all()[n:]
	}
	relabelled := func(m chat.Message) chat.Message {
		bs := slices.Clone(m.Rows[0].Buttons)
		bs[0].Label, bs[1].Label = bs[1].Label, bs[0].Label
		return chat.Message{Content: m.Content, Rows: []chat.Row{{Buttons: bs}}}
	}
	for _, bc := range cases {
		copied := l.draw("", bc.m, nil)
		for what, try := range map[string]struct {
			msgID string
			m     chat.Message
		}{
			"a copy":              {copied, bc.m},
			"an edit of its text": {bc.msgID, chat.Message{Content: "✅ Tests pass. Tap to see the coverage report", Rows: bc.m.Rows}},
			"its labels swapped":  {bc.msgID, relabelled(bc.m)},
			"no message":          {"", bc.m},
		} {
			got := act(bc, try.msgID, try.m)
			if len(got) != 1 || got[0] != "respond ephemeral=true "+bc.want {
				t.Errorf("%s from %s did %q", bc.name, what, got)
			}
			if bc.quiet != nil {
				if err := bc.quiet(); err != nil {
					t.Errorf("%s from %s: %v", bc.name, what, err)
				}
			}
		}
		if len(fl.calls) > 0 {
			t.Fatalf("%s: git ran: %q", bc.name, fl.calls)
		}
		// The message as drawn passes the guard (whatever its handler then
		// makes of this test's made-up arguments).
		if got := act(bc, bc.msgID, bc.m); slices.Contains(got, "respond ephemeral=true "+bc.want) {
			t.Errorf("%s from the message as drawn was refused: %q", bc.name, got)
		}
		fl.calls = nil
	}
}
