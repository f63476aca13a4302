package hook

import (
	"context"
	"slices"
	"testing"
	"time"
)

// Claude kills the Stop hook (its timeout, or the session ends) after it
// took the reply's place for the posting run but before it handed the
// order over: the pipe closes, the run reads order "" and takes a place
// of its own, behind the one held for its own pid. Its reply should still
// be posted at once.
func TestHookKilledBeforeHandOffDoesNotStallTheReply(t *testing.T) {
	r := newRelay(t)
	prev := detach
	defer func() { detach = prev }()
	var run postingRun
	detach = func(ctx context.Context, args []string, input []byte, getenv Env) (postingRun, error) {
		var err error
		run, err = prev(context.WithoutCancel(ctx), args, input, getenv)
		return postingRun{pid: run.pid, hand: func(string) {}}, err
	}
	r.stop(t, "p1", "reply one")
	start := time.Now()
	run.hand("") // the kernel closed the pipe: no order
	if got := r.contents(); !slices.Equal(got, []string{"reply one"}) || time.Since(start) > placeWait/2 {
		t.Fatalf("after %v the channel holds %q: the run waited for the place held for itself", time.Since(start), got)
	}
}
