package discord

import (
	"bytes"
	"context"
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
// caller's context. discordgo's own retries are off: it would sleep a
// rate limit's full retry_after, which could hold a hook far longer than
// Claude should wait.
type Poster struct {
	dg *discordgo.Session
}

// NewPoster returns a poster for one bot.
func NewPoster(apiBase, token string) (*Poster, error) {
	dg, err := NewSession(apiBase, token)
	if err != nil {
		return nil, err
	}
	dg.ShouldRetryOnRateLimit = false
	dg.MaxRestRetries = 0
	return &Poster{dg: dg}, nil
}

// retryBase is the first backoff between attempts; it doubles each time.
const retryBase = 200 * time.Millisecond

// Send posts one message (content of at most 2000 characters and files) and
// returns its id. See Post.
func (p *Poster) Send(ctx context.Context, channelID, content string, fs []chat.File) (string, error) {
	return p.Post(ctx, channelID, chat.Message{Content: content, Files: fs})
}

// Post posts one message with its components and files and returns its id.
// It retries transient failures until ctx ends, then returns an error
// wrapping ErrTransient; other failures (a 4xx that a retry cannot fix) are
// returned at once.
func (p *Poster) Post(ctx context.Context, channelID string, m chat.Message) (string, error) {
	var id string
	err := p.retry(ctx, func() error {
		sent, err := p.dg.ChannelMessageSendComplex(channelID, &discordgo.MessageSend{Content: m.Content, Components: Components(m.Rows),
			Files: files(m.Files), AllowedMentions: NoMentions}, discordgo.WithContext(ctx))
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

// Edit replaces a message's text and components, with the same retries.
func (p *Poster) Edit(ctx context.Context, channelID, messageID string, m chat.Message) error {
	comps := Components(m.Rows)
	content := m.Content
	err := p.retry(ctx, func() error {
		_, err := p.dg.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: messageID, Channel: channelID, Content: &content,
			Components: &comps, AllowedMentions: NoMentions}, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		return fmt.Errorf("edit %s: %w", messageID, err)
	}
	return nil
}

// retry runs call until it succeeds, fails for good, or ctx ends.
func (p *Poster) retry(ctx context.Context, call func() error) error {
	var lastErr error
	for attempt := 0; ; attempt++ {
		err := call()
		if err == nil {
			return nil
		}
		wait, transient := classify(err, retryBase<<min(attempt, 5))
		if !transient {
			return err
		}
		lastErr = err
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
	return fmt.Errorf("%w: %v", ErrTransient, lastErr)
}

// IsUnknownMessage reports whether err says the message no longer exists.
func IsUnknownMessage(err error) bool {
	var rest *discordgo.RESTError
	return errors.As(err, &rest) && rest.Message != nil && rest.Message.Code == discordgo.ErrCodeUnknownMessage
}

// classify says whether err is worth retrying and after how long.
func classify(err error, backoff time.Duration) (time.Duration, bool) {
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

// StartThread starts a public thread in a channel and returns its id.
func (p *Poster) StartThread(ctx context.Context, channelID, name string) (string, error) {
	th, err := p.dg.ThreadStartComplex(channelID, &discordgo.ThreadStart{Name: name, Type: discordgo.ChannelTypeGuildPublicThread,
		AutoArchiveDuration: 24 * 60}, discordgo.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("start thread in %s: %w", channelID, err)
	}
	return th.ID, nil
}

// React adds an emoji reaction to a message.
func (p *Poster) React(ctx context.Context, channelID, messageID, emoji string) error {
	if err := p.dg.MessageReactionAdd(channelID, messageID, emoji, discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("react on %s: %w", messageID, err)
	}
	return nil
}

// Typing shows the typing indicator in a channel for about ten seconds.
func (p *Poster) Typing(ctx context.Context, channelID string) error {
	if err := p.dg.ChannelTyping(channelID, discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("typing in %s: %w", channelID, err)
	}
	return nil
}

var downloadClient = &http.Client{Timeout: 30 * time.Second}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// Download fetches an attachment URL, at most limit bytes; a larger one is
// an error that says so.
func (p *Poster) Download(ctx context.Context, url string, limit int64) ([]byte, error) {
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
