package hook

import (
	"log/slog"
	"time"
)

// EnvTrace, when set (to anything), makes the Stop hook log when each step
// of a reply happened ("reply timings", unix ns): how make bench finds
// where the time between Claude's Stop and the reply in Discord goes.
// Unset, the marks cost nothing but a nil check. Not CCBRIDGE_*: [claude]
// env, where it is set, refuses those (ccbridge sets them itself).
const EnvTrace = "CCB_HOOK_TRACE"

// tracer notes the steps of one hook run; nil traces nothing.
type tracer struct {
	names []string
	at    []int64
}

func newTracer(getenv Env) *tracer {
	if getenv(EnvTrace) == "" {
		return nil
	}
	return &tracer{}
}

// mark notes that the step name is done now.
func (t *tracer) mark(name string) {
	if t == nil {
		return
	}
	t.names = append(t.names, name)
	t.at = append(t.at, time.Now().UnixNano())
}

// log writes the marks as one line.
func (t *tracer) log(log *slog.Logger, promptID string) {
	if t == nil || len(t.names) == 0 {
		return
	}
	attrs := []any{"prompt", promptID}
	for i, n := range t.names {
		attrs = append(attrs, n, t.at[i])
	}
	log.Info("reply timings", attrs...)
}
