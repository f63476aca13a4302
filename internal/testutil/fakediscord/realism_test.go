package fakediscord

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/discord"
)

// call makes a raw REST call as bot (token "" = no Authorization) and
// returns the status and decoded JSON body.
func call(t *testing.T, srv *Server, token, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, srv.URL+"/api/v10"+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	return do1(t, req)
}

func do1(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// code returns a Discord error body's code.
func code(body map[string]any) int {
	c, _ := body["code"].(float64)
	return int(c)
}

// events records what a session receives, in order (SyncEvents).
type events struct {
	created chan *discordgo.MessageCreate
	threads chan *discordgo.ThreadCreate
	updates chan *discordgo.ThreadUpdate
	deletes chan *discordgo.ThreadDelete
}

func listen(intents discordgo.Intent) (discordgo.Intent, *events, func(*discordgo.Session)) {
	ev := &events{created: make(chan *discordgo.MessageCreate, 20), threads: make(chan *discordgo.ThreadCreate, 20),
		updates: make(chan *discordgo.ThreadUpdate, 20), deletes: make(chan *discordgo.ThreadDelete, 20)}
	return intents, ev, func(dg *discordgo.Session) {
		dg.SyncEvents = true
		dg.Identify.Intents = intents
		dg.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) { ev.created <- m })
		dg.AddHandler(func(_ *discordgo.Session, m *discordgo.ThreadCreate) { ev.threads <- m })
		dg.AddHandler(func(_ *discordgo.Session, m *discordgo.ThreadUpdate) { ev.updates <- m })
		dg.AddHandler(func(_ *discordgo.Session, m *discordgo.ThreadDelete) { ev.deletes <- m })
	}
}

const allIntents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsMessageContent

func TestSystemMessages(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	_, ev, setup := listen(allIntents)
	connect(t, srv, bot, setup)

	// A person starts a thread in the client: THREAD_CREATE, then
	// THREAD_CREATED (18) in the parent, by that person, content = name.
	th := srv.StartThread(bot.ChannelID, "side quest", owner)
	if tc := recv(t, ev.threads); tc.ID != th {
		t.Fatalf("THREAD_CREATE = %+v", tc.Channel)
	}
	m := recv(t, ev.created)
	if m.Type != discordgo.MessageTypeThreadCreated || m.ChannelID != bot.ChannelID || m.Content != "side quest" || m.Author.ID != owner.ID {
		t.Fatalf("MESSAGE_CREATE = type %d in %s %q by %s", m.Type, m.ChannelID, m.Content, m.Author.ID)
	}
	if m.MessageReference == nil || m.MessageReference.ChannelID != th {
		t.Errorf("THREAD_CREATED reference = %+v", m.MessageReference)
	}
	if n := len(srv.Messages(th)); n != 0 {
		t.Errorf("a thread started without a message has %d messages, want 0 (no starter message)", n)
	}

	// From a message: 18 in the parent and 21 inside the thread.
	root := srv.Post(bot.ChannelID, owner, "root")
	recv(t, ev.created)
	th2 := srv.StartThreadFrom(root.ID, "from root", owner)
	if th2 != root.ID {
		t.Fatalf("thread id %s, want the message's %s", th2, root.ID)
	}
	recv(t, ev.threads)
	if m := recv(t, ev.created); m.Type != 18 || m.ChannelID != bot.ChannelID || m.Content != "from root" {
		t.Fatalf("first MESSAGE_CREATE = type %d in %s %q", m.Type, m.ChannelID, m.Content)
	}
	if m := recv(t, ev.created); m.Type != discordgo.MessageTypeThreadStarterMessage || m.ChannelID != th2 || m.Content != "" {
		t.Fatalf("second MESSAGE_CREATE = type %d in %s %q", m.Type, m.ChannelID, m.Content)
	}

	// A pin notice: any type through MESSAGE_CREATE, empty content.
	pin := srv.PostSystem(bot.ChannelID, owner, 6, "")
	if m := recv(t, ev.created); m.ID != pin.ID || m.Type != discordgo.MessageTypeChannelPinnedMessage || m.Content != "" {
		t.Fatalf("pin = %+v", m.Message)
	}

	// Rename: THREAD_UPDATE, then type 4 in the thread with the new name.
	srv.RenameThread(th, "renamed", owner)
	if tu := recv(t, ev.updates); tu.ID != th || tu.Name != "renamed" {
		t.Fatalf("THREAD_UPDATE = %+v", tu.Channel)
	}
	if m := recv(t, ev.created); m.Type != discordgo.MessageTypeChannelNameChange || m.ChannelID != th || m.Content != "renamed" || m.Author.ID != owner.ID {
		t.Fatalf("rename message = type %d in %s %q", m.Type, m.ChannelID, m.Content)
	}
	if got, _ := srv.Channel(th); got.Name != "renamed" {
		t.Errorf("name = %q", got.Name)
	}
}

func TestBotThreadAnnouncedInParent(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	dg := connect(t, srv, bot, nil)
	_, err := dg.ThreadStartComplex(bot.ChannelID, &discordgo.ThreadStart{Name: "by bot", Type: discordgo.ChannelTypeGuildPublicThread, AutoArchiveDuration: 1440})
	if err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages(bot.ChannelID)
	if len(msgs) != 1 || msgs[0].Type != 18 || msgs[0].Author.ID != bot.UserID || msgs[0].Content != "by bot" {
		t.Fatalf("parent messages = %+v", msgs)
	}
	if _, err := dg.ThreadStartComplex(bot.ChannelID, &discordgo.ThreadStart{Name: "private", Type: discordgo.ChannelTypeGuildPrivateThread, AutoArchiveDuration: 60}); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages(bot.ChannelID)); n != 1 {
		t.Errorf("a private thread was announced: %d parent messages", n)
	}
}

func TestDeleteThread(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	_, ev, setup := listen(allIntents)
	dg := connect(t, srv, bot, setup)
	th := srv.StartThread(bot.ChannelID, "doomed", owner)
	recv(t, ev.threads)
	sent, err := dg.ChannelMessageSend(th, "hello")
	if err != nil {
		t.Fatal(err)
	}
	srv.DeleteThread(th)
	td := recv(t, ev.deletes)
	if td.ID != th || td.ParentID != bot.ChannelID || td.GuildID != bot.GuildID || td.Type != discordgo.ChannelTypeGuildPublicThread {
		t.Fatalf("THREAD_DELETE = %+v", td.Channel)
	}
	for name, f := range map[string]func() error{
		"send":  func() error { _, err := dg.ChannelMessageSend(th, "again"); return err },
		"get":   func() error { _, err := dg.ChannelMessage(th, sent.ID); return err },
		"edit":  func() error { _, err := dg.ChannelMessageEdit(th, sent.ID, "x"); return err },
		"react": func() error { return dg.MessageReactionAdd(th, sent.ID, "✅") },
		"chan":  func() error { _, err := dg.Channel(th); return err },
	} {
		if c := restCode(f()); c != 10003 {
			t.Errorf("%s in a deleted thread: code %d, want 10003", name, c)
		}
	}
}

func restCode(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return -1
}

func TestArchivedThreadRules(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	_, ev, setup := listen(allIntents)
	dg := connect(t, srv, bot, setup)
	th := srv.StartThread(bot.ChannelID, "idle", owner)
	recv(t, ev.threads)
	sent, err := dg.ChannelMessageSend(th, "card")
	if err != nil {
		t.Fatal(err)
	}
	srv.AutoArchive(th)
	if tu := recv(t, ev.updates); tu.ID != th || !tu.ThreadMetadata.Archived || tu.ThreadMetadata.Locked {
		t.Fatalf("THREAD_UPDATE = %+v", tu.Channel)
	}
	if _, err := dg.ChannelMessageEdit(th, sent.ID, "edited"); restCode(err) != 50083 {
		t.Errorf("edit in an archived thread: %v, want 50083", err)
	}
	if err := dg.MessageReactionAdd(th, sent.ID, "✅"); restCode(err) != 50083 {
		t.Errorf("reaction in an archived thread: %v, want 50083", err)
	}
	if got, _ := srv.Message(sent.ID); got.Content != "card" || len(got.Reactions) != 0 {
		t.Errorf("message changed: %+v", got)
	}
	// Posting unarchives it; then edits work again.
	if _, err := dg.ChannelMessageSend(th, "back"); err != nil {
		t.Fatal(err)
	}
	if tu := recv(t, ev.updates); tu.ThreadMetadata.Archived {
		t.Error("posting did not dispatch an unarchive")
	}
	if _, err := dg.ChannelMessageEdit(th, sent.ID, "edited"); err != nil {
		t.Errorf("edit after unarchive: %v", err)
	}
	// A locked archived thread refuses posts.
	srv.ArchiveThread(th, true)
	if _, err := dg.ChannelMessageSend(th, "no"); restCode(err) != 50083 {
		t.Errorf("post in a locked thread: %v, want 50083", err)
	}
}

func TestNonceDedup(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	path := "/channels/" + bot.ChannelID + "/messages"
	st1, m1 := call(t, srv, auth, "POST", path, map[string]any{"content": "once", "nonce": "n-1", "enforce_nonce": true})
	st2, m2 := call(t, srv, auth, "POST", path, map[string]any{"content": "once", "nonce": "n-1", "enforce_nonce": true})
	if st1 != 200 || st2 != 200 || m1["id"] != m2["id"] || m2["nonce"] != "n-1" {
		t.Fatalf("enforced nonce: %d %v / %d %v", st1, m1["id"], st2, m2["id"])
	}
	if n := len(srv.Messages(bot.ChannelID)); n != 1 {
		t.Fatalf("%d messages after a duplicate nonce, want 1", n)
	}
	if got, _ := srv.Message(m1["id"].(string)); got.Nonce != "n-1" {
		t.Errorf("Message.Nonce = %q", got.Nonce)
	}
	// Integer nonces count too; without enforce_nonce nothing is deduplicated.
	call(t, srv, auth, "POST", path, map[string]any{"content": "int", "nonce": 42, "enforce_nonce": true})
	call(t, srv, auth, "POST", path, map[string]any{"content": "int", "nonce": 42, "enforce_nonce": true})
	call(t, srv, auth, "POST", path, map[string]any{"content": "loose", "nonce": "n-1"})
	call(t, srv, auth, "POST", path, map[string]any{"content": "other", "nonce": "n-2", "enforce_nonce": true})
	if n := len(srv.Messages(bot.ChannelID)); n != 4 {
		t.Fatalf("%d messages, want 4", n)
	}
}

func TestFailAfterCreate(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	dg := connect(t, srv, bot, nil)
	dg.MaxRestRetries = 0
	srv.FailAfterCreate("POST", "/channels/*/messages", 502, 1)
	if _, err := dg.ChannelMessageSend(bot.ChannelID, "maybe"); err == nil {
		t.Fatal("the 502 was not reported")
	}
	msgs := srv.Messages(bot.ChannelID)
	if len(msgs) != 1 || msgs[0].Content != "maybe" {
		t.Fatalf("messages = %+v, want the one created before the 502", msgs)
	}
	if c := srv.Calls(); c[len(c)-1].Status != 502 {
		t.Errorf("recorded status %d", c[len(c)-1].Status)
	}
	// The fault is used up.
	if _, err := dg.ChannelMessageSend(bot.ChannelID, "sure"); err != nil {
		t.Fatal(err)
	}
}

func multipartBody(t *testing.T, payload string, files map[string][]byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	_ = mw.WriteField("payload_json", payload)
	for name, data := range files {
		part, _ := mw.CreateFormFile(name, strings.TrimPrefix(name, "files")+".bin")
		_, _ = part.Write(data)
	}
	_ = mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

func TestSlowUploads(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	srv.SlowUploads(200_000)
	ct, body := multipartBody(t, `{"content":"file"}`, map[string][]byte{"files[0]": bytes.Repeat([]byte("x"), 100_000)})
	req, _ := http.NewRequest("POST", srv.URL+"/api/v9/channels/"+bot.ChannelID+"/messages", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", "Bot "+bot.Token)
	start := time.Now()
	if st, _ := do1(t, req); st != 200 {
		t.Fatalf("status %d", st)
	}
	if el := time.Since(start); el < 400*time.Millisecond {
		t.Errorf("100 kB at 200 kB/s took %v, want ≥ 0.5 s", el)
	}
	// A client that gives up mid-upload creates nothing (at 1 kB/s the
	// upload would take 100 s).
	srv.SlowUploads(1000)
	client := &http.Client{Timeout: 100 * time.Millisecond}
	req, _ = http.NewRequest("POST", srv.URL+"/api/v9/channels/"+bot.ChannelID+"/messages", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", "Bot "+bot.Token)
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the upload finished within 100 ms")
	}
	if !srv.waitFor(wait, func() bool { return len(srv.calls) == 2 }) {
		t.Fatal("the abandoned upload was never answered")
	}
	if n := len(srv.Messages(bot.ChannelID)); n != 1 {
		t.Errorf("%d messages, want 1 (the abandoned upload must not be created)", n)
	}
}

func TestIntents(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")

	// A portal without the Message Content toggle: 4014 on IDENTIFY.
	bot.DenyMessageContent = true
	dg, err := discord.NewSession(srv.URL, bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	dg.Identify.Intents = allIntents
	err = dg.Open()
	if err == nil || !strings.Contains(err.Error(), "4014") {
		dg.Close()
		t.Fatalf("Open with a disallowed intent: %v, want close 4014", err)
	}
	dg.Close()

	// Without MESSAGE_CONTENT: other people's messages arrive empty unless
	// they mention the bot.
	_, ev, setup := listen(discordgo.IntentsGuilds | discordgo.IntentsGuildMessages)
	connect(t, srv, bot, setup)
	srv.Post(bot.ChannelID, owner, "secret", File{Name: "a.txt", Data: []byte("x")})
	if m := recv(t, ev.created); m.Content != "" || len(m.Attachments) != 0 || m.Author.ID != owner.ID {
		t.Errorf("without MESSAGE_CONTENT: content %q, %d attachments", m.Content, len(m.Attachments))
	}
	srv.Post(bot.ChannelID, owner, "<@"+bot.UserID+"> hi")
	if m := recv(t, ev.created); m.Content != "<@"+bot.UserID+"> hi" {
		t.Errorf("a mention lost its content: %q", m.Content)
	}
}

func TestIntentsGateEvents(t *testing.T) {
	srv := New(t)
	owner := srv.NewUser("owner")

	// GUILD_MESSAGES only: no THREAD_CREATE.
	a := srv.Main()
	_, evA, setupA := listen(discordgo.IntentsGuildMessages | discordgo.IntentsMessageContent)
	connect(t, srv, a, setupA)
	srv.StartThread(a.ChannelID, "quiet", owner)
	srv.Post(a.ChannelID, owner, "after")
	m := recv(t, evA.created)
	if m.Type != 18 {
		t.Fatalf("first message type %d", m.Type)
	}
	if m := recv(t, evA.created); m.Content != "after" {
		t.Fatalf("second message %q", m.Content)
	}
	select {
	case tc := <-evA.threads:
		t.Errorf("THREAD_CREATE without GUILDS: %+v", tc.Channel)
	default:
	}

	// GUILDS only: no MESSAGE_CREATE.
	b := srv.NewBot("other")
	_, evB, setupB := listen(discordgo.IntentsGuilds)
	connect(t, srv, b, setupB)
	srv.Post(b.ChannelID, owner, "unseen")
	th := srv.StartThread(b.ChannelID, "seen", owner)
	if tc := recv(t, evB.threads); tc.ID != th {
		t.Fatalf("THREAD_CREATE = %+v", tc.Channel)
	}
	select {
	case m := <-evB.created:
		t.Errorf("MESSAGE_CREATE without GUILD_MESSAGES: %q", m.Content)
	default:
	}
}

func TestPersonPostUnarchives(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	_, ev, setup := listen(allIntents)
	connect(t, srv, bot, setup)
	th := srv.StartThread(bot.ChannelID, "t", owner)
	srv.AutoArchive(th)
	srv.Post(th, owner, "wake up")
	recv(t, ev.threads)
	if tu := recv(t, ev.updates); !tu.ThreadMetadata.Archived {
		t.Fatal("first THREAD_UPDATE is not the archive")
	}
	if tu := recv(t, ev.updates); tu.ThreadMetadata.Archived {
		t.Error("a person's post did not unarchive the thread")
	}
	if c, _ := srv.Channel(th); c.Archived {
		t.Error("thread still archived")
	}
}
