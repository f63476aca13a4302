// Package hook is the program behind ccbridge-hook-stop and
// ccbridge-hook-pretool, which Claude Code runs on its hook events. A hook
// must start fast, never wedge Claude and never leak into the daemon, so it
// imports only claudehook and state (a test enforces that it does not pull
// in the daemon's packages). It fails open: on any error it logs to the
// runtime directory and exits 0 with no output, which leaves Claude's own
// flow untouched. The policy hook is the exception: where a session's
// rules should hold but cannot be known, it asks (policy.go).
package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/codexhook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Program selects which binary is running.
type Program string

// The two hook binaries.
const (
	Stop    Program = "ccbridge-hook-stop"
	PreTool Program = "ccbridge-hook-pretool"
)

// Env is how a hook reads its environment (os.Getenv in production).
type Env func(string) string

// budget bounds a whole hook run. A Stop's waiting for the transcript and
// retrying Discord happen in a run Claude does not wait for (detach.go);
// what is not posted by then is in the outbox.
const budget = 30 * time.Second

// Main runs one hook invocation and returns the process exit code.
func Main(ctx context.Context, prog Program, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv Env) int {
	tr := newTracer(getenv)
	tr.mark("start")
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintf(stdout, "%s is run by Claude Code as a hook (JSON on stdin); ccbridge registers it for you.\n", prog)
		return 0
	}
	if prog == Stop && len(args) > 0 && args[0] == StatusLineArg {
		return StatusLine(ctx, stdin, stdout, stderr, getenv)
	}
	global := slices.Contains(args, claudehook.GlobalFlag)
	enforcing := prog == PreTool && slices.Contains(args, claudehook.PolicyFlag)
	if global && !enforcing && getenv(state.EnvSession) != "" {
		// Registered in the user's settings, running in a pane ccbridge
		// started: that pane's own --settings hooks handle this event. A
		// claude the model starts from that pane lands here too; only the
		// policy hook below governs it (its replies and prompts are not
		// the session's).
		return 0
	}
	// Claude ends a hook that waits for an answer with a signal when the
	// person answers in the terminal: the wait ends and the card says so.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()

	arg, hasArg, argErr := claudehook.PolicyArg(args)
	h := &handler{out: stdout, session: getenv(state.EnvSession), headless: headless(getenv), argErr: argErr, tr: tr,
		args: args, getenv: getenv, posting: slices.Contains(args, postFlag)}
	if hasArg && argErr == nil {
		h.arg = &arg
	}
	root := getenv(state.EnvRuntimeDir)
	if root == "" {
		root = state.HookRuntimeDir()
	}
	store, err := state.OpenStore(root)
	if err != nil {
		// No runtime dir, no log file: say it on stderr, which Claude shows
		// only in verbose mode for exit 0. The policy still holds.
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		h.storeErr = err
		if enforcing {
			h.log = slog.New(slog.NewTextHandler(stderr, nil))
			return h.enforceWithout(stdin, global, args)
		}
		return 0
	}
	logf, err := store.Dir.OpenLog("hook.log")
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 0
	}
	defer logf.Close()
	log := slog.New(slog.NewJSONHandler(logf, nil)).With("hook", string(prog), "pid", os.Getpid())
	store.Dir.SetLogger(log)

	if h.posting {
		stdin, h.order = readHandoff(stdin) // detach.go
	}
	if !enforcing && !h.posting {
		stdin = io.TeeReader(stdin, &h.raw) // a Stop or a PreToolUse hands its input on
	}
	in, err := claudehook.Decode(stdin)
	if err != nil {
		log.Error("bad input", "err", err)
		return 0
	}
	fromAgent(in, args) // codex.go
	tr.mark("parsed")
	if in.HookEventName != claudehook.EventPermissionRequest {
		// A permission prompt waits up to prompt_timeout; everything else
		// gets the short budget.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, budget)
		defer cancel()
	}
	h.store, h.log = store, log.With("event", in.HookEventName, "claude_session", in.SessionID)
	if enforcing {
		err = h.enforce(in, global) // policy.go
	} else {
		err = h.handle(ctx, prog, in)
	}
	if err != nil {
		h.log.Error("hook failed", "err", err)
	}
	h.tr.mark("done")
	h.tr.log(h.log, in.PromptID)
	return 0
}

type handler struct {
	store *state.Store
	// storeErr is why store could not be opened.
	storeErr error
	out      io.Writer // Claude Code reads the hook's answer here
	log      *slog.Logger
	session  string        // CCBRIDGE_SESSION, or the key of a hand-started session
	route    *state.Route  // for a hand-started session: its project, by cwd
	ext      *state.Extras // opened on first use (see extras)
	// policies is the daemon's copy of the config's [policy] (policy.go);
	// policiesErr, why it could not be read.
	policies    state.Policies
	policiesErr error
	// arg is the session's policy from the hook's command line (a session
	// ccbridge started); argErr, why it could not be decoded.
	arg      *claudehook.SessionPolicy
	argErr   error
	headless bool    // claude -p or the Agent SDK: no terminal (handstarted.go)
	tr       *tracer // CCB_HOOK_TRACE (trace.go); nil when off
	// unsynced sync the records written on the reply's path, once it is
	// out (flush).
	unsynced []func() error
	// A Stop's reply, and a PreToolUse's progress, are posted by a run of
	// its own (detach.go): args and getenv start it, raw is the input it
	// gets. posting says this is that run, and order is the place taken
	// for it ("" for none).
	args    []string
	getenv  Env
	raw     bytes.Buffer
	posting bool
	order   string
	// replyID is the prompt id a Codex Stop's reply is recorded under,
	// and replyFrom the turn's first reply it posts (codexReplyID); ""
	// and 0 for Claude.
	replyID   string
	replyFrom int
}

// handSessionKey names the session record of a Claude session started by
// hand in a project's directory.
func handSessionKey(r state.Route) string { return "hand-" + r.Server + "-" + r.Project }

// routeByCwd finds the project of a hand-started session: the longest
// project path that prefixes its cwd.
func (h *handler) routeByCwd(cwd string) bool {
	routes, err := h.store.Routes.Get(state.RoutesKey)
	if err != nil {
		return false
	}
	r, ok := routes.Match(filepath.Clean(cwd))
	if !ok {
		return false
	}
	h.route, h.session = &r, handSessionKey(r)
	return true
}

func (h *handler) handle(ctx context.Context, prog Program, in *claudehook.Input) error {
	if h.session == "" && h.headless {
		// A headless claude -p the user or a script runs in a project's
		// directory: nobody would see a card or a mirrored reply, and a
		// card would hold it for prompt_timeout. Claude Code decides.
		h.log.Debug("a headless Claude not started by ccbridge; ignored", "cwd", in.Cwd)
		return nil
	}
	if h.session == "" && !h.routeByCwd(in.Cwd) {
		h.log.Debug("not a ccbridge session and no project holds its cwd; ignored", "cwd", in.Cwd)
		return nil
	}
	// Only now: the hooks install-hooks registers run for every Claude on
	// the machine, and those of other sessions must cost next to nothing.
	h.loadPolicies()
	h.trackLive(ctx, in) // handstarted.go: where a hand-started Claude runs; a taken-over one goes to its thread
	isStop := prog == Stop && isStopEvent(in)
	if isStop && h.turnRecorded(ctx, in) {
		// A repeated Stop for a turn already handled: read-only fast path.
		h.log.Info("turn already recorded", "prompt", in.PromptID)
		return nil
	}
	isProgress := prog == PreTool && in.HookEventName == claudehook.EventPreToolUse
	if (isStop || isProgress) && !h.posting {
		// Claude waits for this part: the place only (detach.go).
		err := h.detachTurn(ctx, in, isProgress)
		switch {
		case err == nil:
			h.tr = nil // the reply's timings are the posting run's
			return nil
		case errors.Is(err, errNoProgress):
			// Nothing to post: the call is only recorded, here (the
			// session's last event, which attention pings read).
		default:
			h.log.Warn("posting from the hook Claude waits for", "err", err)
		}
	}
	defer h.flush()
	if isStop && in.Agent == agentCodex {
		h.replyID, h.replyFrom, _ = h.codexReplyID(ctx, in, true) // codex.go
	} else {
		h.codexContinuation(ctx, in) // codexcont.go
	}
	var before state.Session
	if in.HookEventName == claudehook.EventSessionStart {
		before, _ = h.store.Sessions.Get(h.session)
	}
	sess, err := h.touchSession(ctx, in)
	if err != nil {
		return err
	}
	h.tr.mark("session")
	if prog == Stop {
		switch in.HookEventName {
		case claudehook.EventUserPromptSubmit:
			return errors.Join(h.retireCodexPlans(ctx, in), h.promptSubmitted(ctx, in, sess)) // codexkeys.go
		case claudehook.EventSessionStart:
			return h.sessionStarted(ctx, in, before, sess)
		case claudehook.EventNotification:
			return h.notified(ctx, in, sess)
		}
	}
	if prog == PreTool {
		switch in.HookEventName {
		case claudehook.EventPermissionRequest:
			if err := h.liveWaiting(ctx, in, sess); err != nil {
				h.log.Warn("live activity not updated", "err", err)
			}
			return h.permission(ctx, in, sess)
		case claudehook.EventPostToolUse, claudehook.EventPostToolUseFailure:
			return errors.Join(h.retire(ctx, in), h.liveToolEnded(ctx, in, sess))
		case claudehook.EventPreToolUse:
			if isCodexQuestion(in) { // codexkeys.go
				return errors.Join(h.progress(ctx, in, sess), h.codexQuestion(ctx, in, sess))
			}
			return h.progress(ctx, in, sess)
		}
	}
	if in.HookEventName == codexhook.EventInterrupt {
		return h.dismissKeyed(ctx, in) // codexkeys.go
	}
	if !isStop {
		return nil
	}
	pl := h.holdPlace(ctx, sess) // post.go: the place taken while Claude waited for Stop, or one taken now
	defer pl.release()
	h.tr.mark("place")
	turn, created, partial, err := h.recordTurn(ctx, in, sess.ChannelID != "")
	if err != nil || !created {
		return err
	}
	if sess.ChannelID == "" && sess.Server == "" {
		return nil // another front end's session: it reads the turn record
	}
	if sess.ChannelID == "" {
		return fmt.Errorf("session %s has no channel", h.session)
	}
	var pending *claudehook.Input // the reply is last_assistant_message so far
	if partial {
		pending = in
	}
	err = h.postTurn(ctx, sess, turn, pl, pending)
	return errors.Join(err, h.liveRepliesEnded(ctx, in, sess), h.turnEnded(ctx, sess, turn), h.codexPlan(ctx, in, sess))
}

func isStopEvent(in *claudehook.Input) bool {
	return in.HookEventName == claudehook.EventStop || in.HookEventName == claudehook.EventStopFailure
}

// flush makes the records written unsynced durable (state.UpdateUnsynced).
func (h *handler) flush() {
	for _, sync := range h.unsynced {
		if err := sync(); err != nil {
			h.log.Warn("record not synced", "err", err)
		}
	}
	h.unsynced = nil
}

func (h *handler) turnRecorded(ctx context.Context, in *claudehook.Input) bool {
	if _, err := h.store.Turns.Get(state.TurnKey(in.SessionID, in.PromptID)); err != nil {
		return false
	}
	if in.Agent != agentCodex {
		return true
	}
	// The turn went on after a message injected into it (codex.go): a
	// reply not read yet is the posting run's to tell apart.
	id, _, found := h.codexReplyID(ctx, in, false)
	if !found {
		return false
	}
	_, err := h.store.Turns.Get(state.TurnKey(in.SessionID, id))
	return err == nil
}

// touchSession records the Claude session id, the last event and the busy
// state on the session record, so a restart can --resume and the daemon can
// show typing and confirm deliveries.
func (h *handler) touchSession(ctx context.Context, in *claudehook.Input) (state.Session, error) {
	if cur, err := h.store.Sessions.Get(h.session); err == nil && h.routeRecorded(cur, in) && unchangedToolEvent(cur, in) {
		// Tool events come by the dozen: skip the locked, fsynced write
		// when it would only move LastEventAt a little.
		return cur, nil
	}
	update := h.store.Sessions.Update
	if isStopEvent(in) {
		// On the reply's path: synced once the reply is out (flush).
		update = h.store.Sessions.UpdateUnsynced
		h.unsynced = append(h.unsynced, func() error { return h.store.Sessions.Sync(h.session) })
	}
	sess, err := update(ctx, h.session, func(s *state.Session) error {
		if r := h.route; r != nil {
			s.Server, s.Project, s.ChannelID, s.Cwd, s.Progress = r.Server, r.Project, r.ChannelID, in.Cwd, r.Progress
		}
		if in.SessionID != "" {
			s.ClaudeSessionID = in.SessionID
		}
		if in.TranscriptPath != "" {
			s.TranscriptPath = in.TranscriptPath
		}
		if in.PromptID != "" {
			s.LastPromptID = in.PromptID
		}
		if h.replyID != "" {
			s.LastPromptID = h.replyID // what reads the last turn finds this reply
		}
		if in.PermissionMode != "" {
			s.ModeSeen = in.PermissionMode
		}
		now := time.Now().UTC()
		switch in.HookEventName {
		case claudehook.EventUserPromptSubmit:
			s.Busy = true
			s.AddPrompt(state.Prompt{At: now, Text: in.Prompt})
		case claudehook.EventStop, claudehook.EventStopFailure, claudehook.EventSessionEnd, codexhook.EventInterrupt:
			s.Busy = false
		case claudehook.EventPostModelSwitch:
			s.ModelSwitches++
			s.SwitchRequested = in.RequestedModel
		case claudehook.EventSessionStart:
			s.StartSource = in.Source
			if in.Model != "" {
				s.Model = in.Model
			}
		}
		s.LastEvent = in.HookEventName
		s.LastEventAt = now
		return nil
	})
	if err != nil {
		return sess, fmt.Errorf("update session %s: %w", h.session, err)
	}
	return sess, nil
}

// routeRecorded reports whether the record already holds what the route
// of a hand-started session writes (always true for other sessions).
func (h *handler) routeRecorded(s state.Session, in *claudehook.Input) bool {
	r := h.route
	return r == nil || (s.Server == r.Server && s.Project == r.Project && s.ChannelID == r.ChannelID && s.Cwd == in.Cwd && s.Progress == r.Progress)
}

// lastEventFresh is how stale LastEventAt may get on tool events before it
// is written again; the daemon only uses it at a scale of minutes.
const lastEventFresh = 30 * time.Second

func unchangedToolEvent(s state.Session, in *claudehook.Input) bool {
	switch in.HookEventName {
	case claudehook.EventPreToolUse, claudehook.EventPostToolUse, claudehook.EventPostToolUseFailure:
	default:
		return false
	}
	// After a Notification the next tool event is news: it says the dialog
	// the notification was about was answered (the daemon's pings read it).
	return s.LastEvent != claudehook.EventNotification && s.ClaudeSessionID == in.SessionID && s.TranscriptPath == in.TranscriptPath &&
		(in.PromptID == "" || s.LastPromptID == in.PromptID) && (in.PermissionMode == "" || s.ModeSeen == in.PermissionMode) &&
		time.Since(s.LastEventAt) < lastEventFresh
}

// recordTurn claims the turn once (by Claude session id and prompt id) and
// stores its reply: every text block of the final assistant message. With
// quick (a reply about to be posted), it does not wait for the transcript:
// the reply is last_assistant_message, and partial says the rest may come
// (complete.go).
func (h *handler) recordTurn(ctx context.Context, in *claudehook.Input, quick bool) (turn state.Turn, created, partial bool, err error) {
	if in.SessionID == "" || in.PromptID == "" {
		return state.Turn{}, false, false, errors.New("stop without session_id or prompt_id")
	}
	id := in.PromptID
	if h.replyID != "" {
		id = h.replyID
	}
	key := state.TurnKey(in.SessionID, id)
	turn = state.Turn{SessionKey: h.session, ClaudeSessionID: in.SessionID, PromptID: id, Event: in.HookEventName, At: time.Now().UTC()}
	switch {
	case in.HookEventName == claudehook.EventStopFailure:
		turn.Error = in.Error
		turn.Reply = in.LastAssistantMessage
	case quick && in.LastAssistantMessage != "" && in.TranscriptPath != "":
		turn.Reply, partial = in.LastAssistantMessage, true
	default:
		turn.Reply = h.reply(ctx, in)
	}
	h.tr.mark("transcript")
	// Not the hook's context: a signal (the pane was killed) or the budget
	// ending during the transcript wait must not lose the reply.
	created, err = h.store.Turns.CreateUnsynced(context.WithoutCancel(ctx), key, turn)
	if created {
		h.unsynced = append(h.unsynced, func() error { return h.store.Turns.Sync(key) })
	}
	if err != nil {
		return turn, false, false, fmt.Errorf("record turn: %w", err)
	}
	h.tr.mark("recorded")
	h.log.Info("turn recorded", "prompt", id, "new", created, "chars", len(turn.Reply), "partial", partial)
	return turn, created, partial, nil
}

// reply builds the turn's reply from the transcript, which holds every
// block of the final message; last_assistant_message, only the last block,
// identifies the message and is the fallback if it never shows up.
func (h *handler) reply(ctx context.Context, in *claudehook.Input) string {
	if in.TranscriptPath == "" {
		return in.LastAssistantMessage
	}
	text, err := h.finalText(ctx, in) // complete.go
	if err != nil {
		h.log.Warn("final message not in the transcript; using last_assistant_message", "err", err)
		return in.LastAssistantMessage
	}
	return text
}
