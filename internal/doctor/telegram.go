package doctor

import (
	"context"
	"fmt"
	"strconv"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/telegram"
)

// telegramServer checks a Telegram bot: its token (getMe), its group (a
// forum supergroup: getChat), the bot's rights there (an administrator
// that may manage topics: getChatMember), that the owners are in the
// group, and says what it cannot check (the topics) and where the panel
// is.
func (d *doctor) telegramServer(ctx context.Context, cfg *config.Config, s config.Server) {
	name := "bot " + s.Name
	token, err := s.ResolveToken()
	if err != nil {
		d.add(name, Fail, "no token: "+err.Error(), "set the token as the config says (token_env or token_file), or re-run `ccbridge setup --telegram`")
		return
	}
	c, err := telegram.NewClient(cfg.Telegram.APIBase, token)
	if err != nil {
		d.add(name, Fail, err.Error(), "fix [telegram].api_base")
		return
	}
	cctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	fmt.Fprintf(d.out, "%-4s  %-22s checking with Telegram (%s)…\n", "…", name, cfg.Telegram.APIBase)
	me, err := c.Me(cctx)
	switch {
	case telegram.IsRefusedToken(err):
		d.add(name, Fail, "Telegram refused the token ("+telegram.Refusal(err)+")",
			"send /token to @BotFather, pick the bot, and run `ccbridge setup --telegram` with the token it gives")
		return
	case err != nil:
		d.add(name, Fail, "cannot reach Telegram: "+err.Error(), "check the network or [telegram].api_base")
		return
	}
	d.add(name, OK, fmt.Sprintf("token works: %s (id %d) on Telegram", me.Label(), me.ID), "")

	chatID, err := telegram.ParseChatID(s.ChatID)
	if err != nil {
		return // config check has said so
	}
	group, err := c.Chat(cctx, chatID)
	if err != nil {
		d.add(name+" group", Fail, "chat "+s.ChatID+": "+errText(err),
			"add the bot to the group (group → Add Members → "+me.Label()+"), or fix chat_id (`ccbridge setup --telegram` finds it from a message you send there)")
		return
	}
	switch {
	case group.Type == "group":
		d.add(name+" group", Fail, fmt.Sprintf("%q (%s) is a basic group: it has no topics", group.Title, s.ChatID),
			"turn Topics on (group → Edit → Topics): the group becomes a supergroup with a new id; run `ccbridge setup --telegram` to use it")
		return
	case !group.Forum():
		d.add(name+" group", Fail, fmt.Sprintf("%q (%s) is a %s with Topics off: projects are topics", group.Title, s.ChatID, group.Type),
			"turn Topics on: group → Edit → Topics")
		return
	}
	d.add(name+" group", OK, fmt.Sprintf("%q (%s): a forum supergroup", group.Title, s.ChatID), "")

	bot, err := c.ChatMember(cctx, chatID, me.ID)
	switch {
	case err != nil:
		d.add(name+" rights", Fail, "cannot read the bot's rights: "+errText(err), "check that the bot is in the group")
	case bot.ManagesTopics():
		d.add(name+" rights", OK, "an administrator that may Manage topics", "")
	case bot.Status == "administrator":
		d.add(name+" rights", Fail, "the bot is an administrator but lacks the right Manage topics: /thread and setup cannot create topics",
			"group → Edit → Administrators → "+me.Label()+" → Manage topics on → Save")
	default:
		d.add(name+" rights", Fail, "the bot is not an administrator of the group ("+bot.Status+"): it sees only commands, not your messages, and cannot create topics",
			"group → Edit → Administrators → Add Admin → "+me.Label()+", with Manage topics on → Save")
	}
	d.tgOwners(cctx, c, name, chatID, s.OwnerIDs)
	d.add(name+" topics", Info, fmt.Sprintf("%d project topic(s) not checked: the Bot API has no call that reads a topic without posting in it "+
		"(no getForumTopic); a deleted topic shows when ccbridge first posts there", len(s.Projects)), "")
	d.add(name+" panel", OK, fmt.Sprintf("the General topic of %q is the control panel", group.Title), "")
}

// tgOwners checks that the owners are in the group: an owner outside it
// cannot write there. None in it fails: nobody could drive the bot.
func (d *doctor) tgOwners(ctx context.Context, c *telegram.Client, name string, chatID int64, owners []string) {
	type outcome struct {
		id, detail string
		in         bool
	}
	var res []outcome
	anyIn := false
	for _, o := range owners {
		id, err := strconv.ParseInt(o, 10, 64)
		if err != nil {
			continue // config check has said so
		}
		m, err := c.ChatMember(ctx, chatID, id)
		switch {
		case err != nil:
			res = append(res, outcome{o, "not a member of the group (" + errText(err) + ")", false})
		case m.In():
			anyIn = true
			res = append(res, outcome{o, "in the group (" + m.Status + ")", true})
		default:
			res = append(res, outcome{o, "not a member of the group (" + m.Status + ")", false})
		}
	}
	const fix = "add them to the group (group → Add Members), or remove the id from owner_ids"
	for _, r := range res {
		switch {
		case r.in:
			d.add(name+" owner "+r.id, OK, r.detail, "")
		case anyIn:
			d.add(name+" owner "+r.id, Warn, r.detail, fix)
		default:
			d.add(name+" owner "+r.id, Fail, r.detail+": no owner is, so nobody can drive the bot", fix)
		}
	}
}

// errText is Telegram's answer, or the error.
func errText(err error) string {
	if r := telegram.Refusal(err); r != "" {
		return r
	}
	return err.Error()
}
