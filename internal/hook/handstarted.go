package hook

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Environment variables tmux sets in each of its panes.
const (
	envTmux     = "TMUX"      // "<socket path>,<server pid>,<session index>"
	envTmuxPane = "TMUX_PANE" // "%<pane id>"
)

// headless reports a Claude without a terminal: claude -p (entrypoint
// sdk-cli, unattended, as 2.1.328 tells its hooks) or the Agent SDK.
func headless(getenv Env) bool {
	return strings.HasPrefix(getenv("CLAUDE_CODE_ENTRYPOINT"), "sdk") || getenv("CLAUDE_CODE_SESSION_ATTENDED") == "0"
}

// paneEnv reads the hook's environment for tmux's variables (a variable
// for tests).
var paneEnv = os.Getenv

// maxLivePrompt bounds the prompts kept on a live record (they are shown
// in /sessions, one line each).
const maxLivePrompt = 300

// trackLive records where a hand-started Claude runs (its tmux server and
// pane, directory and Claude session id, alive until SessionEnd), so that
// /sessions can list it and Take over can drive it. A Claude that was taken
// over is routed to the session that took it: its replies, cards and
// receipts go to that thread. Errors are logged: the hand route stands.
func (h *handler) trackLive(ctx context.Context, in *claudehook.Input) {
	if in.SessionID == "" || h.route == nil {
		return
	}
	getenv := paneEnv
	cur, err := h.store.Live.Get(in.SessionID)
	if err == nil && !liveChange(in) && time.Since(cur.LastEventAt) < lastEventFresh {
		h.bindTo(cur)
		return
	}
	socket := socketFromEnv(getenv(envTmux))
	pane := getenv(envTmuxPane)
	r := h.route
	rec, err := h.store.Live.Update(ctx, in.SessionID, func(l *state.Live) error {
		now := time.Now().UTC()
		l.ClaudeSessionID, l.Server, l.Project, l.ChannelID, l.Cwd = in.SessionID, r.Server, r.Project, r.ChannelID, in.Cwd
		if socket != "" && strings.HasPrefix(pane, "%") {
			l.Socket, l.Pane = socket, pane
		}
		if in.TranscriptPath != "" {
			l.TranscriptPath = in.TranscriptPath
		}
		if l.Started.IsZero() {
			l.Started = now
		}
		switch in.HookEventName {
		case claudehook.EventUserPromptSubmit:
			l.Busy = true
			p := clipRunes(strings.TrimSpace(in.Prompt), maxLivePrompt)
			if l.FirstPrompt == "" {
				l.FirstPrompt = p
			}
			l.LastPrompt = p
		case claudehook.EventStop, claudehook.EventStopFailure:
			l.Busy = false
		case claudehook.EventSessionEnd:
			// /clear ends this id and goes on under a new one in the
			// same pane (SessionStart source "clear" carries the binding).
			l.Busy, l.Ended = false, in.Reason != "clear"
		case claudehook.EventSessionStart:
			l.Ended = false
		}
		l.LastEventAt = now
		return nil
	})
	if err != nil {
		h.log.Error("could not record a hand-started session", "err", err)
		return
	}
	if in.HookEventName == claudehook.EventSessionStart && in.Source == "clear" && rec.Bound == "" && rec.Driveable() {
		rec = h.carryBinding(ctx, rec)
	}
	h.bindTo(rec)
	if in.HookEventName == claudehook.EventSessionEnd && rec.Ended && h.route == nil {
		h.sayEnded(ctx, rec)
	}
}

// carryBinding moves a take-over to the new session id /clear gave the
// Claude in the same pane.
func (h *handler) carryBinding(ctx context.Context, rec state.Live) state.Live {
	all, err := h.store.Live.List()
	if err != nil {
		return rec
	}
	for id, old := range all {
		if id == rec.ClaudeSessionID || old.Bound == "" || old.Socket != rec.Socket || old.Pane != rec.Pane {
			continue
		}
		if _, err := h.store.Live.Update(ctx, id, func(l *state.Live) error { l.Bound, l.Ended = "", true; return nil }); err != nil {
			return rec
		}
		bound := old.Bound
		if r, err := h.store.Live.Update(ctx, rec.ClaudeSessionID, func(l *state.Live) error { l.Bound = bound; return nil }); err == nil {
			h.log.Info("carried a take-over to the session /clear started", "session", bound, "from", id)
			return r
		}
	}
	return rec
}

// sayEnded tells the thread that took a Claude over that it ended.
func (h *handler) sayEnded(ctx context.Context, rec state.Live) {
	sess, err := h.store.Sessions.Get(h.session)
	if err != nil || sess.Channel() == "" {
		return
	}
	text := "👋 The Claude this thread took over has ended in its terminal (pane `" + rec.Pane + "`). Messages here are no longer delivered; start a new one with /sessions."
	if err := h.deliver(ctx, sess, []outgoing{{content: text}}); err != nil {
		h.log.Error("could not say a taken-over Claude ended", "err", err)
	}
}

// bindTo routes the hook to the session that took this Claude over.
func (h *handler) bindTo(l state.Live) {
	if l.Bound == "" {
		return
	}
	if _, err := h.store.Sessions.Get(l.Bound); err != nil {
		return
	}
	h.session, h.route = l.Bound, nil
}

// liveChange reports whether an event changes what a live record shows.
func liveChange(in *claudehook.Input) bool {
	switch in.HookEventName {
	case claudehook.EventPreToolUse, claudehook.EventPostToolUse, claudehook.EventPostToolUseFailure, claudehook.EventNotification, claudehook.EventPermissionRequest:
		return false
	}
	return true
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// socketFromEnv returns the socket path in a $TMUX value
// ("<socket path>,<server pid>,<session index>"; the path may hold commas).
// The hook does not import the tmux package (it pulls in no driver).
func socketFromEnv(v string) string {
	for range 2 {
		i := strings.LastIndex(v, ",")
		if i < 0 {
			return ""
		}
		v = v[:i]
	}
	return v
}
