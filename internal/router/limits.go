package router

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// Discord refuses a message over chat.Limit characters (50035); for a
// deferred answer the edit fails and the person is left with "thinking…"
// for good. Replies are laid out to fit, text taken from elsewhere is
// bounded, and fit is the last guard on all of it.

// fitCut is what fit adds to content it cuts: a closing fence and "…".
const fitCut = "\n```\n…"

// fit keeps content within chat.Limit.
func fit(s string) string { return fitTo(s, chat.Limit) }

// fitTo keeps text within n characters: longer text is cut at a line
// break, with a code block it leaves open closed.
func fitTo(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	piece := string(rs[:max(n-utf8.RuneCountInString(fitCut), 0)])
	if i := strings.LastIndex(piece, "\n"); i > len(piece)/2 {
		piece = piece[:i]
	}
	if fenceOpen(piece) {
		piece += "\n```"
	}
	return piece + "\n…"
}

// fenceOpen reports whether text ends inside a code block.
func fenceOpen(text string) bool {
	open := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			open = !open
		}
	}
	return open
}

// fitting is a Responder whose every answer fits.
type fitting struct{ chat.Responder }

func (f fitting) Respond(m chat.Reply) error {
	m.Content = fit(m.Content)
	return f.Responder.Respond(m)
}
func (f fitting) Edit(m chat.Reply) (string, error) {
	m.Content = fit(m.Content)
	return f.Responder.Edit(m)
}
func (f fitting) Update(m chat.Message) (string, error) {
	m.Content = fit(m.Content)
	return f.Responder.Update(m)
}

// fittingReplier is a Replier whose every post fits. Send needs no cut:
// it posts a long text in as many messages as it takes.
type fittingReplier struct{ Replier }

func (f fittingReplier) Post(ctx context.Context, server, channelID string, m chat.Message) (string, error) {
	m.Content = fit(m.Content)
	return f.Replier.Post(ctx, server, channelID, m)
}

func (f fittingReplier) PostCard(ctx context.Context, server, channelID string, m chat.Message) (string, []string, error) {
	m.Content = fit(m.Content)
	return f.Replier.PostCard(ctx, server, channelID, m)
}
