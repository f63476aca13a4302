package telegram

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// mentionTag is how the core writes a mention (Discord's form), once
// escaped and defused by PlainSplit.
var mentionTag = regexp.MustCompile(`&lt;@\x{2060}?!?([0-9]+)&gt;`)

// SendMentioning posts content pinging exactly users: the core's <@id>
// tags of those users become Telegram mentions by id; any other tag stays
// text, and @names are defused as in every post.
func (p *Poster) SendMentioning(ctx context.Context, channelID, nonce, content string, users []string) (string, error) {
	want := map[string]bool{}
	for _, u := range users {
		want[u] = true
	}
	var chunks []string
	for _, c := range PlainSplit(content) {
		chunks = append(chunks, mentionTag.ReplaceAllStringFunc(c, func(tag string) string {
			id := mentionTag.FindStringSubmatch(tag)[1]
			if !want[id] {
				return tag
			}
			return `<a href="tg://user?id=` + id + `">@owner</a>`
		}))
	}
	return p.once(ctx, channelID, nonce, func() (string, error) {
		id, _, err := p.send(ctx, channelID, chunks, chat.Message{})
		if err != nil {
			return "", fmt.Errorf("post to %s: %w", channelID, err)
		}
		return id, nil
	})
}

// Notice posts a text of ccbridge's own, each message of it given per.
func (p *Poster) Notice(ctx context.Context, channelID, text string, per time.Duration) error {
	for _, c := range render(text) {
		sctx, cancel := context.WithTimeout(ctx, per)
		_, _, err := p.send(sctx, channelID, []string{c}, chat.Message{})
		cancel()
		if err != nil {
			return fmt.Errorf("post to %s: %w", channelID, err)
		}
	}
	return nil
}

// reactions maps ccbridge's marks to emoji Telegram lets a bot react with
// (ReactionTypeEmoji's list: no ✅, ⏳, ❌ or ⚠️).
var reactions = map[string]string{
	"✅":  "👍",
	"☑️": "👍",
	"👍":  "👍",
	"❌":  "👎",
	"👎":  "👎",
	"⚠️": "🤔",
	"⚠":  "🤔",
	"⏳":  "👀",
	"👀":  "👀",
	"🔇":  "🙈",
	"🎉":  "🎉",
	"🔥":  "🔥",
}

// Reaction is the emoji a bot reacts with for ccbridge's mark, or false
// for a mark it has none for.
func Reaction(mark string) (string, bool) {
	e, ok := reactions[mark]
	return e, ok
}

// React sets the bot's reaction on a message (one per message: a new one
// replaces the last).
func (p *Poster) React(ctx context.Context, channelID, messageID, emoji string) error {
	e, ok := Reaction(emoji)
	if !ok {
		return fmt.Errorf("react on %s: %q has no reaction a Telegram bot may use", messageID, emoji)
	}
	place, err := ParseChannel(channelID)
	if err != nil {
		return err
	}
	id, err := place.message(messageID)
	if err != nil {
		return err
	}
	params := map[string]any{"chat_id": place.Chat, "message_id": id, "reaction": []map[string]string{{"type": "emoji", "emoji": e}}}
	if err := p.c.call(ctx, "setMessageReaction", params, nil, true); err != nil {
		return fmt.Errorf("react on %s: %w", messageID, err)
	}
	// Catch-up reads the marks back, as it reads Discord's reactions.
	if err := p.Journal().mark(context.WithoutCancel(ctx), p.server, channelID, messageID, emoji); err != nil {
		return fmt.Errorf("react on %s: journal the mark: %w", messageID, err)
	}
	return nil
}

// TypingLasts is how long Telegram shows "typing…" after one Typing.
func (p *Poster) TypingLasts() time.Duration { return 5 * time.Second }

// Typing shows "typing…" in the place for about five seconds.
func (p *Poster) Typing(ctx context.Context, channelID string) error {
	place, err := ParseChannel(channelID)
	if err != nil {
		return err
	}
	if err := p.c.call(ctx, "sendChatAction", place.target(map[string]any{"action": "typing"}), nil, true); err != nil {
		return fmt.Errorf("typing in %s: %w", channelID, err)
	}
	return nil
}

// maxTopicName is Telegram's limit on a topic's name.
const maxTopicName = 128

// topicKey is the record key of a topic's channel id.
func topicKey(channelID string) string { return "t" + channelID }

// StartThread opens a forum topic in channelID's chat and records
// channelID as its parent. Like a Discord thread it retries only 429s: a
// create answered late may have been made.
func (p *Poster) StartThread(ctx context.Context, channelID, name string) (string, error) {
	place, err := ParseChannel(channelID)
	if err != nil {
		return "", err
	}
	id, err := p.startTopic(ctx, place.Chat, channelID, name)
	if err != nil {
		return "", fmt.Errorf("start topic in %s: %w", channelID, err)
	}
	return id, nil
}

// startTopic opens a topic in a chat (a forum group, or a person's private
// chat with the bot) and records parent as its parent channel.
func (p *Poster) startTopic(ctx context.Context, chatID int64, parent, name string) (string, error) {
	if r := []rune(name); len(r) > maxTopicName {
		name = string(r[:maxTopicName])
	}
	var topic struct {
		MessageThreadID int64 `json:"message_thread_id"`
	}
	if err := p.c.call(ctx, "createForumTopic", map[string]any{"chat_id": chatID, "name": name}, &topic, false); err != nil {
		return "", err
	}
	id := ChannelID(chatID, topic.MessageThreadID)
	rec := state.TelegramTopic{Server: p.server, ChannelID: id, ParentID: parent, Name: name, Created: time.Now().UTC()}
	if _, err := p.store.Topics.Update(context.WithoutCancel(ctx), topicKey(id), func(t *state.TelegramTopic) error { *t = rec; return nil }); err != nil {
		return "", fmt.Errorf("record topic %s: %w", id, err)
	}
	return id, nil
}

// ArchiveThread closes a forum topic. Closing twice is harmless ("not
// modified" is success).
func (p *Poster) ArchiveThread(ctx context.Context, threadID string) error {
	place, err := ParseChannel(threadID)
	if err != nil {
		return err
	}
	if place.Topic == 0 {
		return fmt.Errorf("close %s: not a forum topic", threadID)
	}
	err = p.c.call(ctx, "closeForumTopic", map[string]any{"chat_id": place.Chat, "message_thread_id": place.Topic}, nil, true)
	if err != nil && !notModified(err) && !strings.Contains(err.Error(), "TOPIC_NOT_MODIFIED") {
		return fmt.Errorf("close topic %s: %w", threadID, err)
	}
	_ = p.markTopic(context.WithoutCancel(ctx), threadID, true)
	return nil
}

// markTopic records a topic as closed or open (catch-up reads no closed
// topic back).
func (p *Poster) markTopic(ctx context.Context, threadID string, closed bool) error {
	_, err := p.store.Topics.Update(ctx, topicKey(threadID), func(t *state.TelegramTopic) error {
		t.Closed = closed
		if t.ChannelID == "" {
			t.Server, t.ChannelID = p.server, threadID
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record topic %s: %w", threadID, err)
	}
	return nil
}

// EveryoneCanView is true for a group (every member reads every topic),
// false for a private chat, whose only other member is the person: group
// ids are negative, user ids positive.
func (p *Poster) EveryoneCanView(_ context.Context, channelID string) (bool, error) {
	place, err := ParseChannel(channelID)
	if err != nil {
		return false, err
	}
	return place.Chat < 0, nil
}

// Topic reads what ccbridge recorded of a topic it opened.
func (p *Poster) Topic(channelID string) (state.TelegramTopic, bool) {
	t, err := p.store.Topics.Get(topicKey(channelID))
	return t, err == nil && t.ParentID != ""
}

// fileScheme starts the URL of a file a person sent: its file_id, which
// getFile turns into a path on the file endpoint. The token stays out of
// every event and log.
const fileScheme = "tg-file:"

// FileURL is the Attachment URL of a file id.
func FileURL(fileID string) string { return fileScheme + fileID }

// Upload timing, as Discord's: a base plus the size at 1 Mbit/s.
const (
	sendBase       = 5 * time.Second
	floorBandwidth = 1_000_000 / 8
)

// Download fetches a file a person sent (a FileURL), at most limit bytes,
// from <api_base>/file/bot<token>/<path>; any other URL is refused.
func (p *Poster) Download(ctx context.Context, url string, limit int64) ([]byte, error) {
	fileID, ok := strings.CutPrefix(url, fileScheme)
	if !ok || fileID == "" {
		return nil, fmt.Errorf("download: %q is not a Telegram file", url)
	}
	ctx, cancel := context.WithTimeout(ctx, sendBase+time.Duration(limit)*time.Second/floorBandwidth)
	defer cancel()
	var f struct {
		FileSize int64  `json:"file_size"`
		FilePath string `json:"file_path"`
	}
	if err := p.c.call(ctx, "getFile", map[string]any{"file_id": fileID}, &f, true); err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	if f.FileSize > limit {
		return nil, fmt.Errorf("download: larger than %d bytes", limit)
	}
	if f.FilePath == "" || strings.Contains(f.FilePath, "..") {
		return nil, fmt.Errorf("download: Telegram gave no usable file path")
	}
	return p.c.download(ctx, f.FilePath, limit)
}
