package discord

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// NoAnswerError is a request Discord (or the api_base standing in for it)
// did not answer in time: a black-holed network or a proxy that hangs.
type NoAnswerError struct {
	URL    string
	Waited time.Duration
	Err    error
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("Discord did not answer in %s (%s)", seconds(e.Waited), e.URL)
}

func (e *NoAnswerError) Unwrap() error { return e.Err }

// seconds writes a wait as a person reads it: "20 s", "0.2 s".
func seconds(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.0f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// Describe makes a REST error name what a person can act on. discordgo's
// URLs are Discord's own, and the rewrite to api_base happens below the
// HTTP client, so its error would name https://discord.com while the
// request went elsewhere: the URL is put right. A request that timed out
// (waited is how long the caller waited) says so plainly.
func Describe(err error, apiBase string, waited time.Duration) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	base := strings.TrimRight(apiBase, "/")
	if base != "" && base != DefaultAPIBase && strings.HasPrefix(ue.URL, DefaultAPIBase+"/") && !strings.HasPrefix(ue.URL, base+"/") {
		// Wrappers made their text when they wrapped: it is rewritten too.
		text, old := err.Error(), ue.URL
		ue.URL = base + strings.TrimPrefix(ue.URL, DefaultAPIBase)
		err = &renamedError{text: strings.ReplaceAll(text, strconv.Quote(old), strconv.Quote(ue.URL)), err: err}
	}
	var na *NoAnswerError
	if ue.Timeout() && !errors.As(err, &na) {
		return &NoAnswerError{URL: ue.URL, Waited: waited, Err: err}
	}
	return err
}

// renamedError is an error whose text names the URL actually asked.
type renamedError struct {
	text string
	err  error
}

func (e *renamedError) Error() string { return e.text }
func (e *renamedError) Unwrap() error { return e.err }

// fail wraps a Client call's error, described (see Describe).
func (c *Client) fail(what string, start time.Time, err error) error {
	return fmt.Errorf("%s: %w", what, Describe(err, c.apiBase, time.Since(start)))
}

// closeAuthenticationFailed is the gateway's close code for a token it
// does not accept.
const closeAuthenticationFailed = 4004

// RefusedToken reports whether Discord refused the bot token: 401 (or 403)
// from REST, or the gateway closing with 4004 Authentication failed.
func RefusedToken(err error) bool {
	var ce *websocket.CloseError
	return IsAuth(err) || (errors.As(err, &ce) && ce.Code == closeAuthenticationFailed)
}

// closeDisallowedIntents is the gateway's close code for an intent the
// bot may not use (Message Content off in the Developer Portal).
const closeDisallowedIntents = 4014

// DisallowedIntents reports whether the gateway closed with 4014.
func DisallowedIntents(err error) bool {
	var ce *websocket.CloseError
	return errors.As(err, &ce) && ce.Code == closeDisallowedIntents
}
