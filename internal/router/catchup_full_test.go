package router

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// gatedSessions holds every receipt until gate closes: the session's worker
// stays on its first message while catch-up fills the queue.
type gatedSessions struct {
	*fakeSessions
	gate chan struct{}
}

func (g gatedSessions) WaitReceipt(ctx context.Context, k string, s time.Time, tx string, to time.Duration) error {
	<-g.gate
	return g.fakeSessions.WaitReceipt(ctx, k, s, tx, to)
}

// Catch-up with more missed messages than a session's queue holds waits
// for room and delivers every one: a message met by a full queue is not
// taken for one claimed already (review of 2026-11-28: two of 67 were lost,
// and the cursor passed them).
func TestCatchUpOverAFullQueueDeliversEveryMessage(t *testing.T) {
	r, ss, h, l, _ := catchUpRouter(t, "1300000000000000100")
	gate := make(chan struct{})
	r.opt.Sessions = gatedSessions{ss, gate}
	n := queuePerSession + 3
	for i := 1; i <= n; i++ {
		h.say(fmt.Sprintf("1300000000000000%03d", 100+i), fmt.Sprintf("m%d", i), time.Minute)
	}
	done := make(chan struct{})
	go func() { r.CatchUp("home", channel, ""); close(done) }()
	time.Sleep(500 * time.Millisecond) // the queue is full and catch-up waits
	close(gate)
	<-done
	for deadline := time.Now().Add(10 * time.Second); len(delivered(l.all())) < n && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if got := delivered(l.all()); len(got) != n {
		t.Fatalf("delivered %d of %d; cursor %q", len(got), n, r.cursor(t).Last)
	}
}
