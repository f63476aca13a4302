package chat

import (
	"context"
	"errors"
	"time"
)

// Poster posts as one bot on one platform: each front end's client
// implements it (internal/discord, internal/telegram), and the core, the
// daemon and the hooks (through the daemon) know only this. Channel and
// message ids are the platform's own, as text.
type Poster interface {
	// Post posts m; PostOnce posts it at most once however often it is
	// retried with the same nonce.
	Post(ctx context.Context, channelID string, m Message) (string, error)
	PostOnce(ctx context.Context, channelID, nonce string, m Message) (string, error)
	// PostCard is Post returning also the ids of the message's
	// attachments: a message with controls is bound to them.
	PostCard(ctx context.Context, channelID string, m Message) (id string, fileIDs []string, err error)
	Edit(ctx context.Context, channelID, messageID string, m Message) error
	// EditCard redraws a card once decided; outcome is the one-line word
	// of what was decided, for platforms that show it apart.
	EditCard(ctx context.Context, channelID, messageID string, m Message, outcome string) error
	// SendMentioning posts content pinging exactly users (attention pings).
	SendMentioning(ctx context.Context, channelID, nonce, content string, users []string) (string, error)
	// Notice posts a text of ccbridge's own, in as many messages as it
	// takes, each given per to go through.
	Notice(ctx context.Context, channelID, text string, per time.Duration) error
	React(ctx context.Context, channelID, messageID, emoji string) error
	Typing(ctx context.Context, channelID string) error
	StartThread(ctx context.Context, channelID, name string) (string, error)
	StartPrivateThread(ctx context.Context, channelID, name string, members []string) (id string, missed []string, err error)
	ArchiveThread(ctx context.Context, threadID string) error
	EveryoneCanView(ctx context.Context, channelID string) (bool, error)
	Download(ctx context.Context, url string, limit int64) ([]byte, error)
	// Limit is the most characters one message may hold once rendered.
	Limit() int
}

// What a post's failure means, whatever the platform: a front end's
// errors match these with errors.Is, so that callers never need to know
// whose error it is.
var (
	// ErrTransient: worth retrying later (network, 5xx, rate limit).
	ErrTransient = errors.New("chat platform unavailable")
	// ErrAuth: the platform refused the bot's token.
	ErrAuth = errors.New("chat platform refused the bot token")
	// ErrMissingPermission: the bot may not do this here.
	ErrMissingPermission = errors.New("the bot lacks a permission here")
	// ErrUnknownMessage: the message (or channel) is gone.
	ErrUnknownMessage = errors.New("unknown message")
	// ErrNoPrivateThreads: the platform has no thread that only some of
	// a group's members read (a Telegram forum's topics are everyone's).
	ErrNoPrivateThreads = errors.New("no private threads: every member of the group can read every thread")
)

// RetryAfterError carries how long the platform asked to wait.
type RetryAfterError interface {
	error
	RetryAfter() time.Duration
}

// RetryAfter is how long err asks to wait before trying again, or 0.
func RetryAfter(err error) time.Duration {
	var ra RetryAfterError
	if errors.As(err, &ra) {
		return ra.RetryAfter()
	}
	return 0
}
