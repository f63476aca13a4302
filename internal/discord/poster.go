package discord

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// ErrTransient marks a failure worth retrying later (5xx, 429, network):
// the caller moves the message to the outbox.
var ErrTransient = errors.New("discord unavailable")

// Poster sends messages over REST with a retry budget bounded by the
// caller's context (discordgo's own retries are off: see restSession).
type Poster struct {
	dg *discordgo.Session
	// Guild is the server the poster posts in, whose messages the core's
	// references link to (refs.go); empty: they show as words.
	Guild string
}

// NewPoster returns a poster for one bot.
func NewPoster(apiBase, token string) (*Poster, error) {
	dg, err := restSession(apiBase, token)
	if err != nil {
		return nil, err
	}
	return &Poster{dg: dg}, nil
}

// retryBase is the first backoff between attempts; it doubles each time.
const retryBase = 200 * time.Millisecond

// Send posts one message (content of at most 2000 characters and files) and
// returns its id. See Post.
func (p *Poster) Send(ctx context.Context, channelID, content string, fs []chat.File) (string, error) {
	return p.Post(ctx, channelID, chat.Message{Content: content, Files: fs})
}

// Notice posts a text of ccbridge's own in as many messages as it takes
// (masked, then cut: see Chunks), each within per; it stops at the first
// message Discord does not take.
func (p *Poster) Notice(ctx context.Context, channelID, text string, per time.Duration) error {
	for _, c := range Chunks(Refs(p.Guild, text)) {
		sctx, cancel := context.WithTimeout(ctx, per)
		_, err := p.Send(sctx, channelID, c, nil)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// SendOnce is Send with the caller's nonce: see PostOnce.
func (p *Poster) SendOnce(ctx context.Context, channelID, nonce, content string, fs []chat.File) (string, error) {
	return p.PostOnce(ctx, channelID, nonce, chat.Message{Content: content, Files: fs})
}

// Post posts one message with its components and files and returns its id.
// It retries transient failures until ctx ends, then returns an error
// wrapping ErrTransient; other failures (a 4xx that a retry cannot fix) are
// returned at once. Every attempt carries the same fresh nonce, so a create
// that Discord made but answered late or with a 5xx is not made twice.
func (p *Poster) Post(ctx context.Context, channelID string, m chat.Message) (string, error) {
	return p.PostOnce(ctx, channelID, randomNonce(), m)
}

// PostOnce is Post with the caller's nonce (see Nonce): Discord creates at
// most one message per nonce within a few minutes, and answers a repeat
// with the message it made. Callers that may repeat a create later (the
// outbox) derive the nonce from something stable.
func (p *Poster) PostOnce(ctx context.Context, channelID, nonce string, m chat.Message) (string, error) {
	var id string
	err := p.retry(ctx, func() error {
		sent, err := p.create(ctx, channelID, nonce, m)
		if err == nil {
			id = sent.ID
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("post to %s: %w", channelID, err)
	}
	return id, nil
}

// SendAttempt is SendOnce with a single try: the caller (the outbox) is
// the retry loop. A transient failure is a *TransientError.
func (p *Poster) SendAttempt(ctx context.Context, channelID, nonce, content string, fs []chat.File) (string, error) {
	var id string
	err := attempt(ctx, func() error {
		sent, err := p.create(ctx, channelID, nonce, chat.Message{Content: content, Files: fs})
		if err == nil {
			id = sent.ID
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("post to %s: %w", channelID, err)
	}
	return id, nil
}

// createBody is a message create as ccbridge sends it: discordgo 0.29's
// MessageSend has no nonce fields.
type createBody struct {
	Content         string                            `json:"content,omitempty"`
	Components      []discordgo.MessageComponent      `json:"components"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions,omitempty"`
	Nonce           string                            `json:"nonce,omitempty"`
	EnforceNonce    bool                              `json:"enforce_nonce,omitempty"`
	Reference       *discordgo.MessageReference       `json:"message_reference,omitempty"`
	Flags           discordgo.MessageFlags            `json:"flags,omitempty"`
}

// create makes one create request through discordgo's request path (and so
// its rate limiter), as ChannelMessageSendComplex does, with the nonce.
func (p *Poster) create(ctx context.Context, channelID, nonce string, m chat.Message) (*discordgo.Message, error) {
	body := createBody{Content: Refs(p.Guild, m.Content), Components: Components(m.Rows), AllowedMentions: NoMentions, Nonce: nonce, EnforceNonce: nonce != "",
		Flags: Flags(m.Rows)}
	if m.ReplyTo != "" {
		// A reply to a message deleted meanwhile is posted all the same.
		keep := false
		body.Reference = &discordgo.MessageReference{MessageID: m.ReplyTo, ChannelID: channelID, FailIfNotExists: &keep}
	}
	endpoint := discordgo.EndpointChannelMessages(channelID)
	var resp []byte
	var err error
	if len(m.Files) > 0 {
		contentType, b, encErr := discordgo.MultipartBodyWithJSON(body, files(m.Files))
		if encErr != nil {
			return nil, fmt.Errorf("encode message: %w", encErr)
		}
		resp, err = p.dg.RequestRaw(http.MethodPost, endpoint, contentType, b, endpoint, 0, discordgo.WithContext(ctx))
	} else {
		resp, err = p.dg.RequestWithBucketID(http.MethodPost, endpoint, body, endpoint, discordgo.WithContext(ctx))
	}
	if err != nil {
		return nil, err
	}
	var msg discordgo.Message
	if err := json.Unmarshal(resp, &msg); err != nil {
		return nil, fmt.Errorf("decode created message: %w", err)
	}
	return &msg, nil
}

// nonceLen is Discord's limit on a message nonce.
const nonceLen = 25

// Nonce derives a message nonce (at most 25 characters) from a stable key,
// such as an outbox entry's key: a retry of the same entry, by this process
// or another, carries the same nonce.
func Nonce(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:nonceLen]
}

func randomNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail
	return hex.EncodeToString(b)[:nonceLen]
}

// Edit replaces a message's text and components, with the same retries.
func (p *Poster) Edit(ctx context.Context, channelID, messageID string, m chat.Message) error {
	comps := Components(m.Rows)
	content := Refs(p.Guild, m.Content)
	err := p.retry(ctx, func() error {
		_, err := p.dg.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: messageID, Channel: channelID, Content: &content,
			Components: &comps, AllowedMentions: NoMentions, Flags: Flags(m.Rows)}, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		return fmt.Errorf("edit %s: %w", messageID, err)
	}
	return nil
}

// retry runs call until it succeeds, fails for good, or ctx ends. A
// transient failure that outlasts ctx is returned as a *TransientError
// that says how long to wait before the next try.
func (p *Poster) retry(ctx context.Context, call func() error) error {
	return p.retryIf(ctx, call, func(error) bool { return true })
}

// retryRateLimits retries only failures that say the request was not
// processed (429s): for a create without a nonce, such as a thread, a
// retry after a 5xx could make a second one.
func (p *Poster) retryRateLimits(ctx context.Context, call func() error) error {
	return p.retryIf(ctx, call, isRateLimit)
}

func isRateLimit(err error) bool {
	var rl *discordgo.RateLimitError
	var blocked *BlockedError
	return errors.As(err, &rl) || errors.As(err, &blocked)
}

func (p *Poster) retryIf(ctx context.Context, call func() error, again func(error) bool) error {
	var lastErr error
	var lastWait time.Duration
	for attempt := 0; ; attempt++ {
		err := run(ctx, call)
		if err == nil {
			return nil
		}
		wait, transient := classify(err, retryBase<<min(attempt, 5))
		if !transient {
			return refused(err)
		}
		lastErr, lastWait = err, wait
		if !again(err) {
			break
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			break
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	return &TransientError{Wait: lastWait, Err: lastErr}
}

// attempt runs call once, classifying a transient failure as retry does.
func attempt(ctx context.Context, call func() error) error {
	if err := run(ctx, call); err != nil {
		return meaning(err)
	}
	return nil
}

// meaning marks a failed call's error with what it means: a
// *TransientError or a *RefusedError.
func meaning(err error) error {
	if wait, transient := classify(err, retryBase); transient {
		return &TransientError{Wait: wait, Err: err}
	}
	return refused(err)
}

// run runs call (a discordgo request made with ctx) and returns when it
// does or when ctx ends, whichever is first. discordgo's rate limiter
// sleeps until a bucket resets without looking at the context; a call left
// behind that way fails at once when it wakes, since its request carries
// the ended context, so nothing is sent late.
func run(ctx context.Context, call func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TransientError is a failure worth retrying after Wait (at the earliest):
// a 5xx, a 429, a network error or a timeout. It matches ErrTransient and
// chat.ErrTransient, and is a chat.RetryAfterError.
type TransientError struct {
	Wait time.Duration
	Err  error
}

func (e *TransientError) Error() string { return ErrTransient.Error() + ": " + e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }
func (e *TransientError) Is(target error) bool {
	return target == ErrTransient || target == chat.ErrTransient
}

// RetryAfter is Wait, for chat.RetryAfter.
func (e *TransientError) RetryAfter() time.Duration { return e.Wait }

// RefusedError is a failure Discord answered for good (a 4xx a retry
// cannot fix). It matches the chat sentinel of what it means, so callers
// that know only chat.Poster tell a refused bot, a missing permission and
// a gone message apart; IsAuth and the other predicates still see through
// it to discordgo's error.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }
func (e *RefusedError) Is(target error) bool {
	switch target {
	case chat.ErrAuth:
		return IsAuth(e.Err)
	case chat.ErrMissingPermission:
		return IsMissingPermission(e.Err)
	case chat.ErrUnknownMessage:
		return IsUnknownMessage(e.Err)
	}
	return false
}

// refused marks a final failure with what it means (RefusedError).
func refused(err error) error {
	var re *RefusedError
	if errors.As(err, &re) {
		return err
	}
	return &RefusedError{Err: err}
}

// RetryAfter returns how long to wait before retrying after err: at least
// what Discord asked for. It is 0 for errors that are not transient.
func RetryAfter(err error) time.Duration {
	var te *TransientError
	if errors.As(err, &te) {
		return te.Wait
	}
	return 0
}

// IsAuth reports whether Discord refused the bot itself: its token (401)
// or its access (403), not one permission of one channel (see
// IsMissingPermission). Retrying does not help; a person must act.
func IsAuth(err error) bool {
	var rest *discordgo.RESTError
	return errors.As(err, &rest) && rest.Response != nil && !IsMissingPermission(err) &&
		(rest.Response.StatusCode == http.StatusUnauthorized || rest.Response.StatusCode == http.StatusForbidden)
}

// IsMissingPermission reports Discord's 403 50013: the bot may not do this
// one thing here (post files without Attach Files, post in a thread
// without Send Messages in Threads). It says nothing of other channels or
// other messages, so it must not hold the bot's other replies back.
func IsMissingPermission(err error) bool {
	var rest *discordgo.RESTError
	return errors.As(err, &rest) && rest.Message != nil && rest.Message.Code == discordgo.ErrCodeMissingPermissions
}

// HTTPStatus returns the HTTP status of Discord's answer in err, or 0.
func HTTPStatus(err error) int {
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil {
		return rest.Response.StatusCode
	}
	return 0
}

// Upload timing: one create may take a base for the round trip plus its
// payload at a floor bandwidth (1 Mbit/s), so a 10 MiB upload gets about
// 90 s instead of failing on every slow uplink.
const (
	sendBase       = 5 * time.Second
	floorBandwidth = 1_000_000 / 8 // bytes per second
)

// SendTimeout is how long one create of a message with size bytes of
// attachments may take.
func SendTimeout(size int64) time.Duration {
	return sendBase + time.Duration(size)*time.Second/floorBandwidth
}

// IsUnknownMessage reports whether err says the message no longer exists.
func IsUnknownMessage(err error) bool {
	var rest *discordgo.RESTError
	return errors.As(err, &rest) && rest.Message != nil && rest.Message.Code == discordgo.ErrCodeUnknownMessage
}

// classify says whether err is worth retrying and after how long.
func classify(err error, backoff time.Duration) (time.Duration, bool) {
	var blocked *BlockedError
	if errors.As(err, &blocked) {
		return max(blocked.RetryAfter, backoff), true
	}
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) {
		return max(rl.RetryAfter, backoff), true
	}
	var rest *discordgo.RESTError
	if errors.As(err, &rest) {
		if rest.Response != nil && (rest.Response.StatusCode >= 500 || rest.Response.StatusCode == http.StatusTooManyRequests) {
			return backoff, true
		}
		return 0, false
	}
	// Network errors, timeouts, a cancelled context: try again later.
	return backoff, true
}

// StartThread starts a public thread in a channel and returns its id. It
// retries rate limits within ctx; not a 5xx or a lost answer, after which
// the thread may exist already (a thread create takes no nonce).
func (p *Poster) StartThread(ctx context.Context, channelID, name string) (string, error) {
	var id string
	err := p.retryRateLimits(ctx, func() error {
		th, err := p.dg.ThreadStartComplex(channelID, &discordgo.ThreadStart{Name: name, Type: discordgo.ChannelTypeGuildPublicThread,
			AutoArchiveDuration: 24 * 60}, discordgo.WithContext(ctx))
		if err == nil {
			id = th.ID
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("start thread in %s: %w", channelID, err)
	}
	return id, nil
}

// ArchiveThread archives a thread (PATCH archived=true), as its owner would
// in the client. Archiving twice is harmless, so every failure is retried.
func (p *Poster) ArchiveThread(ctx context.Context, threadID string) error {
	archived := true
	err := p.retry(ctx, func() error {
		_, err := p.dg.ChannelEditComplex(threadID, &discordgo.ChannelEdit{Archived: &archived}, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		return fmt.Errorf("archive thread %s: %w", threadID, err)
	}
	return nil
}

// React adds an emoji reaction to a message, retrying like Post (adding a
// reaction twice is harmless).
func (p *Poster) React(ctx context.Context, channelID, messageID, emoji string) error {
	err := p.retry(ctx, func() error {
		return p.dg.MessageReactionAdd(channelID, messageID, emoji, discordgo.WithContext(ctx))
	})
	if err != nil {
		return fmt.Errorf("react on %s: %w", messageID, err)
	}
	return nil
}

// Typing shows the typing indicator in a channel for about ten seconds,
// retrying like Post within ctx (give it a short one).
func (p *Poster) Typing(ctx context.Context, channelID string) error {
	err := p.retry(ctx, func() error {
		return p.dg.ChannelTyping(channelID, discordgo.WithContext(ctx))
	})
	if err != nil {
		return fmt.Errorf("typing in %s: %w", channelID, err)
	}
	return nil
}

// downloadClient has no fixed timeout: Download bounds each fetch by
// its size limit.
var downloadClient = &http.Client{}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// Download fetches an attachment URL, at most limit bytes; a larger one is
// an error that says so. It may take as long as limit bytes need at the
// floor bandwidth (as an upload of that size), and no longer.
func (p *Poster) Download(ctx context.Context, url string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, SendTimeout(limit))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	// Attachments live on Discord's CDN, not under api_base: a plain client.
	resp, err := downloadClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download: HTTP %d", resp.StatusCode)
	}
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	if n > limit {
		return nil, fmt.Errorf("download: larger than %d bytes", limit)
	}
	return buf.Bytes(), nil
}

var _ chat.Poster = (*Poster)(nil)

// Limit is Discord's most characters in one message.
func (p *Poster) Limit() int { return chat.Limit }
