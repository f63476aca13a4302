package telegram

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

var testCommands = []chat.CommandSpec{
	{Name: "status", Description: "Show this channel's Claude session"},
	{Name: "thread", Description: "Start a thread with its own Claude", Options: []chat.OptionSpec{
		{Name: "name", Description: "thread name", Required: true}, {Name: "prompt", Description: "first message"}}},
	{Name: "mode", Description: "Switch the permission mode", Options: []chat.OptionSpec{
		{Name: "mode", Required: true, Choices: []chat.Choice{{Name: "Accept edits", Value: "acceptEdits"}, {Name: "Plan first", Value: "plan"}}}}},
	{Name: "Bad-Name!", Description: "not a Telegram name"},
}

// runBot runs a bot of w's poster until the test ends (or stop is called).
func runBot(t *testing.T, w *world, p *Poster, h Handler, o Options) (stop func()) {
	t.Helper()
	o.Server, o.ChatID, o.PollTimeout = "phone", w.tg.ChatID, time.Second
	if o.Commands == nil {
		o.Commands = testCommands
	}
	b := NewBot(p, h, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.Run(ctx)
	}()
	var stopped bool
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	if !w.tg.WaitFor(wait, w.tg.Polling) {
		t.Fatal("the bot does not poll")
	}
	return stop
}

func (w *world) owner() string { return strconv.FormatInt(w.tg.Owner.ID, 10) }

func (w *world) onlyOwner(id string) bool { return id == w.owner() }

func TestBotMessages(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	ch, thread := w.topic("api")
	stranger := w.tg.AddUser("Mallory", true)
	w.tg.Inject(faketelegram.Incoming{From: stranger, ThreadID: thread, Text: "rm -rf /"})
	text := w.tg.OwnerText(thread, "hello Claude")
	w.tg.OwnerText(0, "in General")
	doc := w.tg.OwnerDocument(thread, "notes.md", []byte("# notes"), "read this")
	w.tg.OwnerPhoto(thread, []byte("jpeg"), "")
	w.tg.OwnerVoice(thread, []byte("OggS voice"), 3)
	h.waitFor(t, "five messages", func(r *recorder) bool { return len(r.messages) == 5 })
	m := h.messages
	if m[0].ChannelID != ch || m[0].MessageID != MessageID(w.tg.ChatID, text.MessageID) || m[0].Content != "hello Claude" || m[0].Author.ID != w.owner() ||
		m[0].Server != "phone" || !m[0].Prompt() {
		t.Errorf("text: %+v", m[0])
	}
	if m[1].ChannelID != w.general() {
		t.Errorf("General: %+v", m[1])
	}
	if m[2].Content != "read this" || len(m[2].Attachments) != 1 || m[2].Attachments[0].Name != "notes.md" || m[2].Attachments[0].URL != FileURL(doc.Document.FileID) {
		t.Errorf("document: %+v", m[2])
	}
	if data, err := w.p.Download(context.Background(), m[2].Attachments[0].URL, 1<<20); err != nil || string(data) != "# notes" {
		t.Errorf("download the document: %q %v", data, err)
	}
	if len(m[3].Attachments) != 1 || m[3].Attachments[0].ContentType != "image/jpeg" {
		t.Errorf("photo: %+v", m[3])
	}
	if a, ok := m[4].Voice(); !ok || a.DurationSecs != 3 {
		t.Errorf("voice: %+v is no voice note", m[4])
	}
	for _, ev := range m {
		for _, a := range ev.Attachments {
			if strings.Contains(a.URL, w.tg.Token) {
				t.Errorf("the token is in an attachment's URL: %s", a.URL)
			}
		}
	}
}

func TestBotTopicThreadsCarryTheirParent(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	ch, _ := w.topic("api")
	sub, err := w.p.StartThread(context.Background(), ch, "bugfix")
	if err != nil {
		t.Fatal(err)
	}
	place, _ := ParseChannel(sub)
	w.tg.OwnerText(place.Topic, "fix it")
	h.waitFor(t, "the message", func(r *recorder) bool { return len(r.messages) == 1 })
	if ev := h.messages[0]; ev.ChannelID != sub || ev.ParentID != ch || ev.ThreadName != "bugfix" {
		t.Errorf("a thread's message: %+v", ev)
	}
}

// A thread's topic closed in the app stops its session (the core's
// archive); a project's topic closed does not; reopening records it open.
func TestBotTopicClosedInTheAppArchivesItsThread(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	ch, project := w.topic("api")
	sub, err := w.p.StartThread(context.Background(), ch, "bugfix")
	if err != nil {
		t.Fatal(err)
	}
	place, _ := ParseChannel(sub)
	if _, err := w.tg.CloseTopicAs(w.tg.Owner, project); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tg.CloseTopicAs(w.tg.Owner, place.Topic); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "the archive", func(r *recorder) bool { return len(r.archived) > 0 })
	time.Sleep(100 * time.Millisecond)
	h.mu.Lock()
	got := slices.Clone(h.archived)
	h.mu.Unlock()
	if !slices.Equal(got, []string{sub + "<" + ch}) {
		t.Errorf("archived %q, want the thread's topic alone", got)
	}
	if rec, _ := w.p.store.Topics.Get(topicKey(sub)); !rec.Closed {
		t.Error("the closed topic is not recorded closed")
	}
	if _, err := w.tg.ReopenTopicAs(w.tg.Owner, place.Topic); err != nil {
		t.Fatal(err)
	}
	if !w.tg.WaitFor(wait, func() bool { rec, _ := w.p.store.Topics.Get(topicKey(sub)); return !rec.Closed }) {
		t.Error("the reopened topic is still recorded closed")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.messages) != 0 || len(h.archived) != 1 {
		t.Errorf("service messages reached the core as messages %+v, or a reopen as an archive %q", h.messages, h.archived)
	}
}

func TestBotCommands(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	h.onCommand = func(ev chat.CommandEvent, resp chat.Responder) {
		_ = resp.Defer(false)
		id, err := resp.Edit(chat.Reply{Content: "done: " + ev.Name})
		if err == nil {
			_, _ = resp.Edit(chat.Reply{Content: "done twice: " + ev.Name})
		}
		_ = id
	}
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	if !w.tg.WaitFor(wait, func() bool { return len(w.tg.Commands("chat:"+w.general())) > 0 }) {
		t.Fatal("no commands set for the chat")
	}
	var names []string
	for _, c := range w.tg.Commands("chat:" + w.general()) {
		names = append(names, c.Command)
	}
	if !slices.Equal(names, []string{"status", "thread", "mode"}) {
		t.Errorf("commands: %v", names)
	}
	_, thread := w.topic("api")
	cmd := w.tg.OwnerText(thread, "/thread@ccbridge_test_bot fix-login\nplease fix the login form")
	w.tg.OwnerText(thread, "/mode plan first")
	w.tg.OwnerText(thread, "/status@some_other_bot")
	w.tg.OwnerText(thread, "/compact")
	h.waitFor(t, "two commands and a message", func(r *recorder) bool { return len(r.commands) == 2 && len(r.messages) == 1 })
	slices.SortFunc(h.commands, func(a, b chat.CommandEvent) int { return strings.Compare(a.Name, b.Name) })
	if c := h.commands[1]; c.Name != "thread" || c.Options["name"] != "fix-login" || c.Options["prompt"] != "please fix the login form" {
		t.Errorf("thread: %+v", c)
	}
	if c := h.commands[0]; c.Name != "mode" || c.Options["mode"] != "plan" {
		t.Errorf("mode: %+v", c)
	}
	if h.messages[0].Content != "/compact" {
		t.Errorf("Claude's own command: %+v", h.messages[0])
	}
	answer, ok := w.tg.WaitMessage(wait, func(m faketelegram.Message) bool { return strings.HasPrefix(m.Text, "done twice: thread") })
	if !ok || answer.ReplyToMessage == nil || answer.ReplyToMessage.MessageID != cmd.MessageID {
		t.Errorf("the answer does not reply to the command: %+v", answer)
	}
}

// card posts a card with rows in a new topic.
func (w *world) card(t *testing.T, rows []chat.Row) (string, int64) {
	t.Helper()
	ch, _ := w.topic("api")
	id, _, err := w.p.PostCard(context.Background(), ch, chat.Message{Content: "Allow **Bash**?", Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	return ch, msgID(t, id)
}

// data finds the callback_data of a button by its label.
func (w *world) data(t *testing.T, id int64, label string) string {
	t.Helper()
	m, _ := w.tg.Message(w.tg.ChatID, id)
	if m.ReplyMarkup != nil {
		for _, row := range m.ReplyMarkup.InlineKeyboard {
			for _, b := range row {
				if strings.TrimPrefix(b.Text, checkedMark) == label {
					return b.CallbackData
				}
			}
		}
	}
	t.Fatalf("no button %q on %+v", label, m.ReplyMarkup)
	return ""
}

func (w *world) click(t *testing.T, from faketelegram.User, id int64, label string) string {
	t.Helper()
	q, err := w.tg.Click(from, w.tg.ChatID, id, w.data(t, id, label))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// answeredOnce waits for a query's answer and checks it was the only one.
func (w *world) answeredOnce(t *testing.T, q string) faketelegram.Answer {
	t.Helper()
	var a faketelegram.Answer
	if !w.tg.WaitFor(wait, func() bool { var ok bool; a, ok = w.tg.Answered(q); return ok }) {
		t.Fatalf("query %s not answered", q)
	}
	time.Sleep(50 * time.Millisecond) // a second answer would come now
	n := 0
	for _, c := range w.tg.CallsTo("answerCallbackQuery") {
		if c.Params["callback_query_id"] == q {
			n++
		}
	}
	if n != 1 {
		t.Errorf("query %s answered %d times", q, n)
	}
	return a
}

var permRows = []chat.Row{{Buttons: []chat.Button{
	{Label: "Allow", CustomID: "cb1|inst|perm|" + strings.Repeat("k", 86), Style: chat.Success},
	{Label: "Deny", CustomID: "cb1|inst|deny|x", Style: chat.Danger}}}}

func TestBotClickReachesTheCoreAsDrawn(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	h.onClick = func(ev chat.ComponentEvent, resp chat.Responder) {
		_, _ = resp.Update(chat.Message{Content: "Allowed"})
	}
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	ch, id := w.card(t, permRows)
	q := w.click(t, w.tg.Owner, id, "Allow")
	h.waitFor(t, "the click", func(r *recorder) bool { return len(r.components) == 1 })
	ev := h.components[0]
	if ev.CustomID != permRows[0].Buttons[0].CustomID || ev.ChannelID != ch || ev.MessageID != MessageID(w.tg.ChatID, id) || ev.User.ID != w.owner() {
		t.Errorf("event: %+v", ev)
	}
	if chat.Face(ev.Content, ev.Rows) != chat.Face("Allow **Bash**?", permRows) {
		t.Errorf("the event does not show what was drawn: %q %+v", ev.Content, ev.Rows)
	}
	w.answeredOnce(t, q)
	if m, _ := w.tg.Message(w.tg.ChatID, id); m.Text != "Allowed" || m.ReplyMarkup != nil {
		t.Errorf("after Update: %+v", m)
	}
}

func TestBotEphemeralAnswerIsTheToast(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	h.onClick = func(_ chat.ComponentEvent, resp chat.Responder) {
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
	}
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	_, id := w.card(t, permRows)
	before := len(w.tg.CallsTo("sendMessage"))
	q := w.click(t, w.tg.Owner, id, "Deny")
	if a := w.answeredOnce(t, q); a.Text != "This button is no longer valid." {
		t.Errorf("answer %+v", a)
	}
	if n := len(w.tg.CallsTo("sendMessage")); n != before {
		t.Errorf("an ephemeral answer was posted in the topic")
	}
}

func TestBotStrangerClickDoesNothing(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	_, id := w.card(t, permRows)
	stranger := w.tg.AddUser("Mallory", true)
	q := w.click(t, stranger, id, "Allow")
	w.answeredOnce(t, q)
	time.Sleep(100 * time.Millisecond)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.components) != 0 {
		t.Errorf("a stranger's click reached the core: %+v", h.components)
	}
	if m, _ := w.tg.Message(w.tg.ChatID, id); m.EditDate != 0 {
		t.Errorf("a stranger's click changed the card")
	}
}

func TestBotUnknownTokenIsExpired(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	_, id := w.card(t, permRows)
	w.p.undraw(context.Background(), w.tg.ChatID, MessageID(w.tg.ChatID, id)) // pruned
	q := w.click(t, w.tg.Owner, id, "Allow")
	if a := w.answeredOnce(t, q); a.Text != expired {
		t.Errorf("answer %+v", a)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.components) != 0 {
		t.Error("an expired click reached the core")
	}
}

func TestBotMultiSelectTogglesThenSubmits(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	rows := []chat.Row{{Select: &chat.Select{CustomID: "cb1|inst|ask|q1", MinValues: 1, MaxValues: 3, Options: []chat.Option{
		{Label: "Red", Value: "r"}, {Label: "Green", Value: "g"}, {Label: "Blue", Value: "b"}}}}}
	_, id := w.card(t, rows)
	w.answeredOnce(t, w.click(t, w.tg.Owner, id, submitLabel))
	w.answeredOnce(t, w.click(t, w.tg.Owner, id, "Red"))
	w.answeredOnce(t, w.click(t, w.tg.Owner, id, "Blue"))
	w.answeredOnce(t, w.click(t, w.tg.Owner, id, "Red"))
	w.answeredOnce(t, w.click(t, w.tg.Owner, id, "Green"))
	m, _ := w.tg.Message(w.tg.ChatID, id)
	var labels []string
	for _, row := range m.ReplyMarkup.InlineKeyboard {
		labels = append(labels, row[0].Text)
	}
	if !slices.Equal(labels, []string{"Red", "✓ Green", "✓ Blue", submitLabel}) {
		t.Errorf("keyboard after toggles: %v", labels)
	}
	h.mu.Lock()
	early := len(h.components)
	h.mu.Unlock()
	if early != 0 {
		t.Errorf("toggles or a short Submit reached the core: %d", early)
	}
	w.answeredOnce(t, w.click(t, w.tg.Owner, id, submitLabel))
	h.waitFor(t, "the submit", func(r *recorder) bool { return len(r.components) == 1 })
	if ev := h.components[0]; ev.CustomID != "cb1|inst|ask|q1" || !slices.Equal(ev.Values, []string{"g", "b"}) ||
		chat.Face(ev.Content, ev.Rows) != chat.Face("Allow **Bash**?", rows) {
		t.Errorf("submit: %+v", ev)
	}
}

func TestBotSingleSelectPicks(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	rows := []chat.Row{{Select: &chat.Select{CustomID: "cb1|inst|pick", Options: []chat.Option{{Label: "One", Value: "1"}, {Label: "Two", Value: "2"}}}}}
	_, id := w.card(t, rows)
	w.answeredOnce(t, w.click(t, w.tg.Owner, id, "Two"))
	h.waitFor(t, "the pick", func(r *recorder) bool { return len(r.components) == 1 })
	if ev := h.components[0]; ev.CustomID != "cb1|inst|pick" || !slices.Equal(ev.Values, []string{"2"}) {
		t.Errorf("pick: %+v", ev)
	}
}

func TestBotFormByForceReply(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	h.onClick = func(_ chat.ComponentEvent, resp chat.Responder) {
		_ = resp.OpenModal(chat.Modal{CustomID: "cb1|inst|denyform|x", Title: "Deny with instructions", Inputs: []chat.TextInput{
			{CustomID: "why", Label: "What should Claude do instead?", Required: true, Paragraph: true},
			{CustomID: "note", Label: "A note", MaxLength: 5}}})
	}
	h.onModal = func(_ chat.ModalEvent, resp chat.Responder) { _, _ = resp.Update(chat.Message{Content: "Denied"}) }
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	ch, id := w.card(t, permRows)
	q := w.click(t, w.tg.Owner, id, "Deny")
	w.answeredOnce(t, q)
	prompt := func(label string) faketelegram.Message {
		t.Helper()
		m, ok := w.tg.WaitMessage(wait, func(m faketelegram.Message) bool {
			return m.ForceReply && strings.Contains(m.Text, label) && m.EditDate == 0
		})
		if !ok {
			t.Fatalf("no prompt for %q", label)
		}
		return m
	}
	first := prompt("What should Claude do instead?")
	stranger := w.tg.AddUser("Mallory", true)
	if _, err := w.tg.ForceReplyAnswer(stranger, w.tg.ChatID, first.MessageID, "approve everything"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tg.ForceReplyAnswer(w.tg.Owner, w.tg.ChatID, first.MessageID, "use the test database"); err != nil {
		t.Fatal(err)
	}
	second := prompt("A note")
	if _, err := w.tg.ForceReplyAnswer(w.tg.Owner, w.tg.ChatID, second.MessageID, "too long"); err != nil {
		t.Fatal(err)
	}
	again, ok := w.tg.WaitMessage(wait, func(m faketelegram.Message) bool { return m.ForceReply && strings.Contains(m.Text, "too long") })
	if !ok {
		t.Fatal("a too long answer was not asked again")
	}
	if _, err := w.tg.ForceReplyAnswer(w.tg.Owner, w.tg.ChatID, again.MessageID, "ok"); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "the form", func(r *recorder) bool { return len(r.modals) == 1 })
	ev := h.modals[0]
	if ev.CustomID != "cb1|inst|denyform|x" || ev.Values["why"] != "use the test database" || ev.Values["note"] != "ok" ||
		ev.MessageID != MessageID(w.tg.ChatID, id) || ev.ChannelID != ch || ev.User.ID != w.owner() || chat.Face(ev.Content, ev.Rows) != chat.Face("Allow **Bash**?", permRows) {
		t.Errorf("form: %+v", ev)
	}
	if !w.tg.WaitFor(wait, func() bool { m, _ := w.tg.Message(w.tg.ChatID, id); return m.Text == "Denied" }) {
		t.Error("the form's Update did not redraw the card")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.messages) != 0 {
		t.Errorf("answers to a form reached Claude: %+v", h.messages)
	}
}

// A reply to a form's prompt that the bot no longer waits for (its time
// passed, here across a restart) is no prompt for Claude: it is told the
// form is gone, and nothing reaches the core.
func TestBotAnswerToAFormGoneIsNotAPrompt(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	h.onClick = func(_ chat.ComponentEvent, resp chat.Responder) {
		_ = resp.OpenModal(chat.Modal{CustomID: "cb1|inst|denyform|x", Title: "Deny with instructions", Inputs: []chat.TextInput{
			{CustomID: "why", Label: "What should Claude do instead?", Required: true, Paragraph: true}}})
	}
	stop := runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	_, id := w.card(t, permRows)
	w.answeredOnce(t, w.click(t, w.tg.Owner, id, "Deny"))
	prompt, ok := w.tg.WaitMessage(wait, func(m faketelegram.Message) bool { return m.ForceReply })
	if !ok {
		t.Fatal("no prompt")
	}
	stop()
	// The form outlives the restart (TestFormOutlivesARestart), not its time.
	key := state.TelegramFormKey(strconv.FormatInt(w.tg.ChatID, 10), strconv.FormatInt(prompt.MessageID, 10))
	if _, err := w.store.Forms.Update(context.Background(), key, func(f *state.TelegramForm) error {
		f.Expires = time.Now().Add(-time.Second)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	after := newRecorder()
	runBot(t, w, w.p, after, Options{IsOwner: w.onlyOwner})
	answer, err := w.tg.ForceReplyAnswer(w.tg.Owner, w.tg.ChatID, prompt.MessageID, "use the test database")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.tg.WaitMessage(wait, func(m faketelegram.Message) bool {
		return m.From != nil && m.From.IsBot && m.ReplyToMessage != nil && m.ReplyToMessage.MessageID == answer.MessageID &&
			strings.Contains(m.Text, "no longer waits")
	}); !ok {
		t.Error("the person was not told the form is gone")
	}
	after.mu.Lock()
	defer after.mu.Unlock()
	if len(after.messages) != 0 || len(after.modals) != 0 {
		t.Errorf("an answer to a form gone reached the core: %+v %+v", after.messages, after.modals)
	}
}

func TestBotConfirmsOnlyWhatTheHandlerTook(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir() + "/durable"
	release, entered := make(chan struct{}), make(chan struct{})
	// The first process "crashes" while its handler holds the message: its
	// poll loop is stopped and the handler never returns in time.
	first := newRecorder()
	first.onMessage = func(chat.MessageEvent) { close(entered); <-release }
	b := NewBot(posterFor(t, w.tg, openStore(t, dir)), first, Options{Server: "phone", ChatID: w.tg.ChatID, PollTimeout: time.Second, IsOwner: w.onlyOwner})
	ctx, crash := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Run(ctx) }()
	defer func() { crash(); close(release); <-done }()
	_, thread := w.topic("api")
	in := w.tg.OwnerText(thread, "do not lose me")
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the message was not handed over")
	}
	time.Sleep(100 * time.Millisecond)
	if p := w.tg.Pending(); len(p) != 1 {
		t.Fatalf("confirmed before the handler returned: pending %v", p)
	}
	crash()

	second := newRecorder()
	stop2 := runBot(t, w, posterFor(t, w.tg, openStore(t, dir)), second, Options{IsOwner: w.onlyOwner})
	second.waitFor(t, "the message again", func(r *recorder) bool { return len(r.messages) == 1 })
	if second.messages[0].MessageID != MessageID(w.tg.ChatID, in.MessageID) {
		t.Errorf("redelivered %+v", second.messages[0])
	}
	if !w.tg.WaitFor(wait, func() bool { return len(w.tg.Pending()) == 0 }) {
		t.Errorf("the handled update was not confirmed: %v", w.tg.Pending())
	}
	stop2()
}

func TestBotSkipsWhatItHandedOverBeforeARestart(t *testing.T) {
	w := newWorld(t)
	_, thread := w.topic("api")
	handled := w.tg.OwnerText(thread, "handed over, then the process died before its next poll confirmed it")
	// What the dead process recorded after its handler returned.
	if _, err := w.store.Offsets.Update(context.Background(), "phone", func(o *state.TelegramOffset) error {
		o.Next = w.tg.Pending()[0] + 1
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	w.tg.OwnerText(thread, "next")
	h.waitFor(t, "the next message", func(r *recorder) bool { return len(r.messages) >= 1 })
	time.Sleep(100 * time.Millisecond)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.messages) != 1 || h.messages[0].Content != "next" {
		t.Errorf("message %d handed over twice: %+v", handled.MessageID, h.messages)
	}
}

func TestBotQuickTogglesKeepEveryTick(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	rows := []chat.Row{{Select: &chat.Select{CustomID: "cb1|inst|ask|q2", MaxValues: 3, Options: []chat.Option{
		{Label: "Red", Value: "r"}, {Label: "Green", Value: "g"}, {Label: "Blue", Value: "b"}}}}}
	_, id := w.card(t, rows)
	// Three clicks before any redraw: each carries the keyboard untouched.
	qs := []string{w.click(t, w.tg.Owner, id, "Red"), w.click(t, w.tg.Owner, id, "Green"), w.click(t, w.tg.Owner, id, "Blue")}
	for _, q := range qs {
		w.answeredOnce(t, q)
	}
	w.answeredOnce(t, w.click(t, w.tg.Owner, id, submitLabel))
	h.waitFor(t, "the submit", func(r *recorder) bool { return len(r.components) == 1 })
	got := slices.Clone(h.components[0].Values)
	slices.Sort(got)
	if !slices.Equal(got, []string{"b", "g", "r"}) {
		t.Errorf("submitted %v after three quick ticks", got)
	}
}

func TestBotStopsOnARefusedToken(t *testing.T) {
	w := newWorld(t)
	p, err := NewPoster(w.tg.URL, "7000000001:AAWrongTokenWrongTokenWrongToken00", "phone", w.store)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err = NewBot(p, newRecorder(), Options{Server: "phone", ChatID: w.tg.ChatID}).Run(ctx)
	if !errors.Is(err, chat.ErrAuth) || ctx.Err() != nil {
		t.Errorf("Run with a refused token: %v", err)
	}
}
