package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A turn's reply takes its place in its channel's order while Claude
// waits: Stop is registered sync, and its hook only takes the place and
// hands the rest (reading the transcript, posting, retrying Discord) to a
// detached run of this program. Claude runs the next turn, and so its
// Stop, only once that hook has returned, so the places are taken in turn
// order however late the machine gets to each posting run. (An async Stop
// took its place whenever its process got there: under load, after the
// next turn's.) What Claude wrote before a tool call goes the same way:
// PreToolUse is sync, and its hook takes the text's place before Claude
// runs the tool, so before the turn's Stop; an async one, run late, came
// after the reply.

// postFlag marks the detached run that posts a turn's reply or a tool
// call's progress. Its stdin is
// the hook's input, then a line with the order of the place taken for it
// (empty for none).
const postFlag = "--post-turn"

// placeTimeout bounds taking the place while Claude waits; a posting run
// handed no place takes its own, as it gets there.
const placeTimeout = 2 * time.Second

// postingRun is a started posting run: pid holds the place, and hand
// gives it the place's order and lets it go.
type postingRun struct {
	pid  int
	hand func(order string)
}

// detach starts the posting run of a hook whose input is input (a
// variable for tests, which run it in-process).
var detach = startPostingRun

// errNoProgress says a tool call has no progress to post (the session's
// progress is off): no run is started for it.
var errNoProgress = errors.New("progress is off")

// detachTurn takes the place in its channel's order of a turn's reply,
// or of a tool call's progress, for a posting run it starts. An error
// means no run has it: the caller posts it itself.
func (h *handler) detachTurn(ctx context.Context, in *claudehook.Input, progress bool) error {
	sess, _ := h.store.Sessions.Get(h.session)
	level := progressLevel(sess)
	if progress && level == "off" {
		return errNoProgress
	}
	run, err := detach(ctx, append(slices.Clone(h.args), postFlag), h.raw.Bytes(), h.getenv)
	if err != nil {
		return fmt.Errorf("detach the post: %w", err)
	}
	order := ""
	defer func() { run.hand(order) }()
	channel := h.turnChannel(sess)
	if channel == "" || (progress && level == progressLive) {
		// Another front end's session: the run only records the turn. A
		// live card is posted at once and edited in place.
		return nil
	}
	places, err := state.OpenPlaces(h.store.Dir)
	if err != nil {
		h.log.Warn("reply order unavailable", "err", err)
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, placeTimeout)
	defer cancel()
	if order, err = places.HoldFor(pctx, h.store, channel, run.pid); err != nil {
		h.log.Warn("reply order unavailable", "err", err)
	}
	h.log.Info("post detached", "prompt", in.PromptID, "tool_use", in.ToolUseID, "run_pid", run.pid, "order", order)
	return nil
}

// turnChannel is the channel the session's posts go to, as touchSession
// will record it.
func (h *handler) turnChannel(sess state.Session) string {
	if r := h.route; r != nil {
		sess.ChannelID = r.ChannelID
	}
	return sess.Channel()
}

// startPostingRun starts this program again with args, in a session of its
// own (Claude ending the hook's process group must not end it), its input
// on a pipe and no other tie to Claude: Claude reads the hook's stdout and
// stderr until they close, so the run gets /dev/null, and it runs in /, so
// it keeps no worktree in use. It ends within the hook's budget.
// (os.StartProcess, not os/exec: the hooks stay out of the exec seam,
// which belongs to the daemon.)
func startPostingRun(_ context.Context, args []string, input []byte, _ Env) (postingRun, error) {
	exe, err := os.Executable()
	if err != nil {
		return postingRun{}, err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return postingRun{}, err
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return postingRun{}, err
	}
	p, err := os.StartProcess(exe, append([]string{exe}, args...), &os.ProcAttr{Dir: "/", Env: os.Environ(), Files: []*os.File{r, null, null},
		Sys: &syscall.SysProcAttr{Setsid: true}})
	r.Close()
	if err != nil {
		w.Close()
		return postingRun{}, fmt.Errorf("start %s: %w", exe, err)
	}
	pid := p.Pid
	_ = p.Release() // the run outlives this process; init reaps it
	// The input first: if this process is killed before the order is
	// written, the run still has the turn, and takes its own place.
	if _, err := w.Write(input); err != nil {
		w.Close()
		return postingRun{}, fmt.Errorf("hand the input to the posting run: %w", err) // it died: post from here
	}
	return postingRun{pid: pid, hand: func(order string) {
		_, _ = io.WriteString(w, handoffTrailer(order))
		w.Close()
	}}, nil
}

// handoffTrailer follows the input on a posting run's stdin.
func handoffTrailer(order string) string { return "\n" + order + "\n" }

// readHandoff splits a posting run's stdin into the hook's input and the
// order of the place taken for it ("" for none).
func readHandoff(r io.Reader) (input io.Reader, order string) {
	dec := json.NewDecoder(r)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return bytes.NewReader(nil), ""
	}
	rest, _ := io.ReadAll(io.LimitReader(io.MultiReader(dec.Buffered(), r), 1<<10))
	return bytes.NewReader(raw), strings.TrimSpace(string(rest))
}
