package doctor

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// tgWorld adds a Telegram bot, set up as it should be, to a world: its
// fake group is a forum where the bot is an administrator that manages
// topics, and the owner its creator.
type tgWorld struct {
	*world
	tg     *faketelegram.Server
	token  string
	owners []string
	chatID string
	topic  int64
}

func newTGWorld(t *testing.T) *tgWorld {
	w := &tgWorld{world: newWorld(t), tg: faketelegram.New(t)}
	w.token = w.tg.Token
	w.owners = []string{strconv.FormatInt(w.tg.Owner.ID, 10)}
	w.chatID = strconv.FormatInt(w.tg.ChatID, 10)
	w.topic = w.tg.AddTopic("tg").MessageThreadID // as setup made it, before a test breaks anything
	return w
}

func (w *tgWorld) run() ([]Result, string) {
	w.configText = fmt.Sprintf("[telegram]\napi_base = %q\n", w.tg.URL) + w.world.configText +
		fmt.Sprintf("[[servers]]\nname = \"phone\"\nplatform = \"telegram\"\ntoken = %q\nchat_id = %q\nowner_ids = [\"%s\"]\n"+
			"  [[servers.projects]]\n  name = \"tg\"\n  topic_id = \"%d\"\n  path = %q\n",
			w.token, w.chatID, strings.Join(w.owners, `", "`), w.topic, filepath.Join(w.dir, "api"))
	return w.world.run()
}

func TestDoctorTelegramAllGreen(t *testing.T) {
	w := newTGWorld(t)
	rs, out := w.run()
	if !Passed(rs) {
		t.Fatalf("a good Telegram bot failed doctor:\n%s", out)
	}
	for name, want := range map[string]string{
		"bot phone":                 "token works: @ccbridge_test_bot",
		"bot phone group":           "a forum supergroup",
		"bot phone rights":          "Manage topics",
		"bot phone owner 123456789": "creator",
	} {
		if r := find(rs, name); r.Status != OK || !strings.Contains(r.Detail, want) {
			t.Errorf("%s: %v %q, want OK with %q\n%s", name, r.Status, r.Detail, want, out)
		}
	}
	// No Bot API call reads a topic without posting in the group: said,
	// not pretended.
	if r := find(rs, "bot phone topics"); r.Status != Info || !strings.Contains(r.Detail, "not checked") {
		t.Errorf("topics: %v %q\n%s", r.Status, r.Detail, out)
	}
	if r := find(rs, "bot phone panel"); r.Status != OK || !strings.Contains(r.Detail, "General topic") {
		t.Errorf("panel: %v %q\n%s", r.Status, r.Detail, out)
	}
}

// Each thing that can be wrong with a Telegram bot fails (or warns) the
// check that finds it, with a fix a person can follow.
func TestDoctorTelegramFindings(t *testing.T) {
	cases := []struct {
		name    string
		breakIt func(w *tgWorld)
		check   string
		status  Status
		detail  string
		fix     string
	}{
		{"refused token", func(w *tgWorld) { w.token = "7000000001:revoked" }, "bot phone", Fail, "Telegram refused the token", "@BotFather"},
		{"unknown chat", func(w *tgWorld) { w.chatID = "-1009999999999" }, "bot phone group", Fail, "chat not found", "add the bot"},
		{"topics off", func(w *tgWorld) { w.tg.SetForum(w.tg.ChatID, false) }, "bot phone group", Fail, "Topics off", "Edit → Topics"},
		{"basic group", func(w *tgWorld) {
			g := w.tg.AddGroup("family", faketelegram.BasicGroup)
			w.tg.SetMember(g, w.tg.Bot.ID, "administrator")
			w.chatID = strconv.FormatInt(g, 10)
		}, "bot phone group", Fail, "no topics", "new id"},
		{"not admin", func(w *tgWorld) { w.tg.SetMember(w.tg.ChatID, w.tg.Bot.ID, "member") }, "bot phone rights", Fail, "not an administrator", "Add Admin"},
		{"no manage topics", func(w *tgWorld) { w.tg.SetManageTopics(w.tg.ChatID, w.tg.Bot.ID, false) }, "bot phone rights", Fail, "lacks the right Manage topics", "Manage topics on"},
		{"owner left", func(w *tgWorld) {
			u := w.tg.AddUser("Friend", false)
			w.owners = append(w.owners, strconv.FormatInt(u.ID, 10))
		}, "", Warn, "not a member of the group", "add them to the group"},
		{"no owner in the group", func(w *tgWorld) { w.tg.SetMember(w.tg.ChatID, w.tg.Owner.ID, "") }, "bot phone owner 123456789", Fail, "no owner", "add them to the group"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newTGWorld(t)
			c.breakIt(w)
			rs, out := w.run()
			check := c.check
			if check == "" {
				check = "bot phone owner " + w.owners[len(w.owners)-1]
			}
			r := find(rs, check)
			if r.Status != c.status || !strings.Contains(r.Detail, c.detail) || !strings.Contains(r.Fix, c.fix) {
				t.Errorf("%s: %v %q → %q; want %v with %q → %q\n%s", check, r.Status, r.Detail, r.Fix, c.status, c.detail, c.fix, out)
			}
			if Passed(rs) != (c.status != Fail) {
				t.Errorf("passed %v\n%s", Passed(rs), out)
			}
		})
	}
}
