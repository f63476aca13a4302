package hook

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/guard"
	"github.com/ccbridge/ccbridge/internal/state"
)

// limitError is StopFailure's error for a usage or rate limit (2.1.328's
// enum: rate_limit, overloaded, billing_error, …).
const limitError = "rate_limit"

// resetText matches the reset time in Claude's limit message, as 2.1.328
// writes it for a plan: "You've hit your 5-hour limit · resets 1:33pm
// (UTC)" (also "resets 3pm", optionally with a date "Nov 24, 3pm").
// Compiled on first use: the hooks start on every event, and a regexp
// compiled at init costs every one of them.
var resetText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)resets\s+(?:([A-Z][a-z]{2})\s+(\d{1,2}),?\s+(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)(?:\s*\(([^)]+)\))?`)
})

// limitReset finds when a usage limit resets: from the plan limits the
// statusLine reported (a limit at 100%), else from Claude's message.
// ok is false when neither says.
func limitReset(st *state.Status, message string, now time.Time) (time.Time, bool) {
	if st != nil {
		var best time.Time
		for _, l := range []*state.Limit{st.FiveHour, st.SevenDay} {
			if l != nil && l.UsedPct >= 100 && l.ResetsAt.After(now) && (best.IsZero() || l.ResetsAt.After(best)) {
				best = l.ResetsAt // the later one: both must have reset
			}
		}
		if !best.IsZero() {
			return best, true
		}
	}
	return parseReset(message, now)
}

func parseReset(message string, now time.Time) (time.Time, bool) {
	m := resetText().FindStringSubmatch(message)
	if m == nil {
		return time.Time{}, false
	}
	loc := time.Local
	if m[6] != "" {
		if l, err := time.LoadLocation(strings.TrimSpace(m[6])); err == nil {
			loc = l
		}
	}
	h, _ := strconv.Atoi(m[3])
	mins, _ := strconv.Atoi(m[4])
	if h < 1 || h > 12 || mins > 59 {
		return time.Time{}, false
	}
	h %= 12
	if strings.EqualFold(m[5], "pm") {
		h += 12
	}
	n := now.In(loc)
	y, mo, d := n.Date()
	if m[1] != "" {
		if t, err := time.Parse("Jan 2", m[1]+" "+m[2]); err == nil {
			mo, d = t.Month(), t.Day()
		}
	}
	at := time.Date(y, mo, d, h, mins, 0, 0, loc)
	if m[1] == "" && at.Before(now.Add(-time.Minute)) {
		at = at.AddDate(0, 0, 1) // "resets 1am" said at 11pm: tomorrow
	}
	return at, true
}

// limitNotice is what a turn that hit a usage limit adds to its failure
// message: when the limit resets, or that it is not known.
func limitNotice(at time.Time, known bool, now time.Time) string {
	if !known {
		return "The usage limit's reset time is not known (Claude reported no plan limits)."
	}
	return fmt.Sprintf("The usage limit resets at %s (in %s).", at.UTC().Format("15:04 MST"), untilText(at.Sub(now)))
}

// offerContinue records when the session's limit resets and posts the
// Continue at reset button under the failure message. The daemon sends
// "continue" once an owner has clicked it and the time has come.
func (h *handler) offerContinue(ctx context.Context, sess state.Session, claudeSessionID, promptID string, at time.Time) error {
	ext, err := h.extras()
	if err != nil {
		return err
	}
	poster, bot, err := h.poster(sess.Server)
	if err != nil {
		return fmt.Errorf("continue button: %w", err)
	}
	id, err := chat.ID{Instance: bot.Instance, Kind: state.ResumeKind, Args: []string{h.session}}.Encode()
	if err != nil {
		return err
	}
	if _, err := ext.Resumes.Update(ctx, h.session, func(r *state.Resume) error {
		*r = state.Resume{Server: sess.Server, ChannelID: sess.Channel(), ClaudeSessionID: claudeSessionID, PromptID: promptID, At: at.UTC()}
		return nil
	}); err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	m := chat.Message{
		Content: fmt.Sprintf("⏳ Send \"continue\" to Claude when the limit resets (%s)?", at.UTC().Format("15:04 MST")),
		Rows:    []chat.Row{{Buttons: []chat.Button{{Label: "Continue at reset", CustomID: id, Style: chat.Primary}}}}}
	msgID, err := poster.Post(pctx, sess.Channel(), m)
	if err != nil {
		return err
	}
	// The button acts only from this message as posted (internal/guard).
	_, err = ext.Resumes.Update(ctx, h.session, func(r *state.Resume) error {
		r.MessageID, r.Face = msgID, guard.Face(m, nil)
		return nil
	})
	return err
}
