package fakediscord

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/discord"
)

const wait = 5 * time.Second

// connect opens a real discordgo session for bot; its Close is registered
// after the fake's, so it runs first.
func connect(t *testing.T, srv *Server, bot *Bot, setup func(*discordgo.Session)) *discordgo.Session {
	t.Helper()
	dg, err := discord.NewSession(srv.URL, bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	dg.Identify.Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsMessageContent
	if setup != nil {
		setup(dg)
	}
	if err := dg.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dg.Close() })
	return dg
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("no %T within %v", *new(T), wait)
	}
	panic("unreachable")
}

func TestMessageButtonThreadFileArchive(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	created := make(chan *discordgo.MessageCreate, 10)
	clicks := make(chan *discordgo.InteractionCreate, 10)
	threads := make(chan *discordgo.ThreadCreate, 10)
	updates := make(chan *discordgo.ThreadUpdate, 10)
	dg := connect(t, srv, bot, func(dg *discordgo.Session) {
		dg.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) {
			if m.Author.ID != bot.UserID {
				created <- m
			}
		})
		dg.AddHandler(func(_ *discordgo.Session, i *discordgo.InteractionCreate) { clicks <- i })
		dg.AddHandler(func(_ *discordgo.Session, th *discordgo.ThreadCreate) { threads <- th })
		dg.AddHandler(func(_ *discordgo.Session, th *discordgo.ThreadUpdate) { updates <- th })
	})
	if got := srv.Stats().LastIntents; got != int(discordgo.IntentsGuilds|discordgo.IntentsGuildMessages|discordgo.IntentsMessageContent) {
		t.Errorf("IDENTIFY intents = %d", got)
	}

	srv.Post(bot.ChannelID, owner, "hi", File{Name: "a.png", ContentType: "image/png", Data: []byte{1, 2, 3}})
	m := recv(t, created)
	if m.Content != "hi" || m.Author.ID != owner.ID || len(m.Attachments) != 1 || m.GuildID != bot.GuildID {
		t.Fatalf("MESSAGE_CREATE = %+v", m.Message)
	}
	resp, err := http.Get(m.Attachments[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(body, []byte{1, 2, 3}) {
		t.Fatalf("attachment bytes = %v", body)
	}
	if err := dg.ChannelTyping(bot.ChannelID); err != nil {
		t.Fatal(err)
	}
	sent, err := dg.ChannelMessageSendComplex(bot.ChannelID, &discordgo.MessageSend{
		Content:         "pick <@everyone>",
		AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}},
		Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: "Yes", CustomID: "yes", Style: discordgo.SuccessButton},
			discordgo.Button{Label: "No", CustomID: "no", Style: discordgo.DangerButton},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := dg.MessageReactionAdd(bot.ChannelID, m.ID, "✅"); err != nil {
		t.Fatal(err)
	}
	if got, _ := srv.Message(m.ID); len(got.Reactions) != 1 || got.Reactions[0] != "✅" {
		t.Errorf("reactions = %v", got.Reactions)
	}
	if got, _ := srv.Message(sent.ID); !strings.Contains(string(got.AllowedMentions), `"parse":[]`) {
		t.Errorf("allowed_mentions = %s, want parse []", got.AllowedMentions)
	}

	it := srv.Click(sent.ID, "yes", owner)
	ic := recv(t, clicks)
	if ic.Type != discordgo.InteractionMessageComponent || ic.MessageComponentData().CustomID != "yes" || ic.Member.User.ID != owner.ID || ic.Message.ID != sent.ID {
		t.Fatalf("click = %+v", ic.Interaction)
	}
	if err := dg.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage,
		Data: &discordgo.InteractionResponseData{Content: "yes, by owner", Components: []discordgo.MessageComponent{}}}); err != nil {
		t.Fatal(err)
	}
	if r := srv.WaitResponse(it, wait); r.ResponseType != 7 {
		t.Fatalf("response type %d", r.ResponseType)
	}
	if got, _ := srv.Message(sent.ID); got.Content != "yes, by owner" || len(got.CustomIDs()) != 0 {
		t.Fatalf("updated message = %+v", got)
	}
	if err := dg.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}); err == nil {
		t.Error("a second callback was accepted")
	}

	th, err := dg.MessageThreadStartComplex(bot.ChannelID, sent.ID, &discordgo.ThreadStart{Name: "work", AutoArchiveDuration: 60})
	if err != nil {
		t.Fatal(err)
	}
	if th.ID != sent.ID || th.ParentID != bot.ChannelID {
		t.Fatalf("thread = %+v", th)
	}
	if tc := recv(t, threads); tc.ID != th.ID || !tc.NewlyCreated {
		t.Fatalf("THREAD_CREATE = %+v", tc.Channel)
	}
	if _, err := dg.ChannelMessageSendComplex(th.ID, &discordgo.MessageSend{Content: "file",
		Files: []*discordgo.File{{Name: "out.txt", ContentType: "text/plain", Reader: strings.NewReader("payload")}}}); err != nil {
		t.Fatal(err)
	}
	// A thread started from a message opens with THREAD_STARTER_MESSAGE (21).
	msgs := srv.Messages(th.ID)
	if len(msgs) != 2 || msgs[0].Type != 21 || msgs[1].Type != 0 || string(msgs[1].Files[0].Data) != "payload" || msgs[1].Files[0].Name != "out.txt" {
		t.Fatalf("thread messages = %+v", msgs)
	}
	srv.ArchiveThread(th.ID, false)
	if tu := recv(t, updates); tu.ID != th.ID || !tu.ThreadMetadata.Archived {
		t.Fatalf("THREAD_UPDATE = %+v", tu.Channel)
	}
	// Posting unarchives an archived, unlocked thread.
	if _, err := dg.ChannelMessageSend(th.ID, "back"); err != nil {
		t.Fatal(err)
	}
	if c, _ := srv.Channel(th.ID); c.Archived {
		t.Error("posting did not unarchive the thread")
	}
}

func TestValidationErrors(t *testing.T) {
	srv := New(t)
	srv.InvalidBodiesExpected.Store(true) // these bodies are meant to be refused
	bot := srv.Main()
	dg := connect(t, srv, bot, nil)
	var rest *discordgo.RESTError
	_, err := dg.ChannelMessageSend(bot.ChannelID, strings.Repeat("x", 2001))
	if !errors.As(err, &rest) || rest.Message.Code != 50035 {
		t.Errorf("2001 chars: %v", err)
	}
	_, err = dg.ChannelMessageSend(bot.ChannelID, "")
	if !errors.As(err, &rest) || rest.Message.Code != 50006 {
		t.Errorf("empty: %v", err)
	}
	_, err = dg.ChannelMessageSend("999", "x")
	if !errors.As(err, &rest) || rest.Message.Code != 10003 {
		t.Errorf("unknown channel: %v", err)
	}
	long := strings.Repeat("i", 101)
	_, err = dg.ChannelMessageSendComplex(bot.ChannelID, &discordgo.MessageSend{Content: "x", Components: []discordgo.MessageComponent{
		discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.Button{Label: "a", CustomID: long}}}}})
	if !errors.As(err, &rest) || rest.Message.Code != 50035 {
		t.Errorf("long custom_id: %v", err)
	}
	bad, _ := discord.NewSession(srv.URL, "not-a-token")
	if _, err := bad.ChannelMessageSend(bot.ChannelID, "x"); !errors.As(err, &rest) || rest.Response.StatusCode != 401 {
		t.Errorf("bad token: %v", err)
	}
}

func TestCommandModalSelect(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	its := make(chan *discordgo.InteractionCreate, 10)
	dg := connect(t, srv, bot, func(dg *discordgo.Session) {
		dg.AddHandler(func(_ *discordgo.Session, i *discordgo.InteractionCreate) { its <- i })
	})
	if _, err := dg.ApplicationCommandBulkOverwrite(bot.UserID, bot.GuildID, []*discordgo.ApplicationCommand{{Name: "Ask", Description: "x"}}); err == nil {
		t.Error("upper-case command name accepted")
	}
	if _, err := dg.ApplicationCommandBulkOverwrite(bot.UserID, bot.GuildID, []*discordgo.ApplicationCommand{{Name: "ask", Description: "ask",
		Options: []*discordgo.ApplicationCommandOption{{Name: "topic", Description: "t", Type: discordgo.ApplicationCommandOptionString}}}}); err != nil {
		t.Fatal(err)
	}
	cmd := srv.Command(bot.ChannelID, "ask", owner, map[string]any{"topic": "go"})
	ic := recv(t, its)
	if ic.ApplicationCommandData().Name != "ask" || ic.ApplicationCommandData().Options[0].StringValue() != "go" {
		t.Fatalf("command = %+v", ic.ApplicationCommandData())
	}
	if err := dg.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal,
		Data: &discordgo.InteractionResponseData{CustomID: "m1", Title: "Why", Components: []discordgo.MessageComponent{
			discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.TextInput{CustomID: "q", Label: "Why", Style: discordgo.TextInputParagraph}}}}}}); err != nil {
		t.Fatal(err)
	}
	srv.WaitResponse(cmd, wait)
	srv.SubmitModal(cmd, owner, map[string]string{"q": "because"})
	ms := recv(t, its)
	data := ms.ModalSubmitData()
	if data.CustomID != "m1" || data.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.TextInput).Value != "because" {
		t.Fatalf("modal submit = %+v", data)
	}
	if err := dg.InteractionRespond(ms.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}); err != nil {
		t.Fatal(err)
	}
	orig, err := dg.InteractionResponseEdit(ms.Interaction, &discordgo.WebhookEdit{Components: &[]discordgo.MessageComponent{
		discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.SelectMenu{CustomID: "sel", Options: []discordgo.SelectMenuOption{
			{Label: "A", Value: "a"}, {Label: "B", Value: "b"}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	sel := srv.Select(orig.ID, "sel", owner, "b")
	si := recv(t, its)
	if v := si.MessageComponentData().Values; len(v) != 1 || v[0] != "b" {
		t.Fatalf("select values = %v", v)
	}
	if err := dg.InteractionRespond(si.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}); err != nil {
		t.Fatal(err)
	}
	if _, err := dg.FollowupMessageCreate(si.Interaction, true, &discordgo.WebhookParams{Content: "only you", Flags: discordgo.MessageFlagsEphemeral}); err != nil {
		t.Fatal(err)
	}
	if r := srv.WaitResponse(sel, wait); r.ResponseType != 6 || len(r.Followups) != 1 {
		t.Fatalf("select response = %+v", r)
	}
}

func TestLateCallbackIsUnknownInteraction(t *testing.T) {
	srv := New(t)
	srv.InteractionTTL = 50 * time.Millisecond
	bot := srv.Main()
	its := make(chan *discordgo.InteractionCreate, 1)
	dg := connect(t, srv, bot, func(dg *discordgo.Session) {
		dg.AddHandler(func(_ *discordgo.Session, i *discordgo.InteractionCreate) { its <- i })
	})
	msg, _ := dg.ChannelMessageSendComplex(bot.ChannelID, &discordgo.MessageSend{Content: "x", Components: []discordgo.MessageComponent{
		discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.Button{Label: "a", CustomID: "a"}}}}})
	srv.Click(msg.ID, "a", srv.NewUser("u"))
	ic := recv(t, its)
	time.Sleep(100 * time.Millisecond)
	var rest *discordgo.RESTError
	if err := dg.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}); !errors.As(err, &rest) || rest.Message.Code != 10062 {
		t.Fatalf("late callback: %v", err)
	}
}

func TestFaultsResumeAndReidentify(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	created := make(chan *discordgo.MessageCreate, 10)
	limited := make(chan *discordgo.RateLimit, 10)
	dg := connect(t, srv, bot, func(dg *discordgo.Session) {
		dg.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) {
			if m.Author.ID != bot.UserID {
				created <- m
			}
		})
		dg.AddHandler(func(_ *discordgo.Session, r *discordgo.RateLimit) { limited <- r })
	})

	srv.RateLimit("POST", "/channels/*/messages", 1, 100*time.Millisecond)
	if _, err := dg.ChannelMessageSend(bot.ChannelID, "after 429"); err != nil {
		t.Fatalf("429 not retried: %v", err)
	}
	recv(t, limited)
	srv.Fail("POST", "/channels/*/messages", 500, 1)
	var rest *discordgo.RESTError
	if _, err := dg.ChannelMessageSend(bot.ChannelID, "x"); !errors.As(err, &rest) || rest.Response.StatusCode != 500 {
		t.Fatalf("500: %v", err)
	}
	if _, err := dg.ChannelMessageSend(bot.ChannelID, "after 500"); err != nil {
		t.Fatal(err)
	}

	srv.DropGateway(bot)
	srv.Post(bot.ChannelID, owner, "sent while down")
	if m := recv(t, created); m.Content != "sent while down" {
		t.Fatalf("replayed %q", m.Content)
	}
	if st := srv.Stats(); st.Resumes != 1 || st.Identifies != 1 {
		t.Fatalf("after drop: %+v", st)
	}
	srv.InvalidateSession(bot)
	if !srv.waitFor(wait, func() bool { return srv.stats.Identifies == 2 }) {
		t.Fatalf("no re-IDENTIFY after op 9: %+v", srv.Stats())
	}
	srv.WaitConnected(bot, wait)
	srv.Post(bot.ChannelID, owner, "after reidentify")
	if m := recv(t, created); m.Content != "after reidentify" {
		t.Fatalf("got %q", m.Content)
	}
}

func TestTwoBotsAreIsolated(t *testing.T) {
	srv := New(t)
	a, b := srv.Main(), srv.NewBot("second")
	owner := srv.NewUser("owner")
	got := map[string]chan string{a.Name: make(chan string, 10), b.Name: make(chan string, 10)}
	for _, bot := range []*Bot{a, b} {
		connect(t, srv, bot, func(dg *discordgo.Session) {
			dg.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) {
				if !m.Author.Bot {
					got[bot.Name] <- m.ChannelID
				}
			})
		})
	}
	srv.Post(b.ChannelID, owner, "to b")
	if ch := recv(t, got[b.Name]); ch != b.ChannelID {
		t.Fatalf("bot b got a message in %s", ch)
	}
	select {
	case ch := <-got[a.Name]:
		t.Fatalf("bot a saw bot b's message in %s", ch)
	case <-time.After(200 * time.Millisecond):
	}
	dgA, _ := discord.NewSession(srv.URL, a.Token)
	if _, err := dgA.ChannelMessageSend(b.ChannelID, "x"); err == nil {
		t.Error("bot a posted in bot b's guild")
	}
}
