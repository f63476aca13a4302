package hook

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Claude Code 2.1.328 writes its transcript behind its hooks: the final
// message is not there yet when Stop fires, nor the tool call when an async
// PreToolUse runs (both seen in the e2e tier). Hooks that need those lines
// wait for the file to change, then look again; they never sleep on a
// guess. Both hooks are registered async, so the wait never holds Claude.
const (
	transcriptWait = 5 * time.Second
	// missedEventPoll covers a change event that never comes.
	missedEventPoll = 250 * time.Millisecond
)

var errTranscriptBehind = errors.New("the transcript never caught up")

// awaitTranscript calls try now and after each change of the transcript,
// until it reports done, fails, or the wait runs out.
func awaitTranscript(ctx context.Context, path string, try func() (bool, error)) error {
	// On a session's first turn the file (and its directory) may not exist
	// yet: Claude creates them lazily. That is one more "not written yet".
	try = func(try func() (bool, error)) func() (bool, error) {
		return func() (bool, error) {
			done, err := try()
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			return done, err
		}
	}(try)
	// Most of the time the lines are there already: no watcher for that.
	if done, err := try(); done || err != nil {
		return err
	}
	var changes <-chan fsnotify.Event
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		if w.Add(filepath.Dir(path)) == nil {
			changes = w.Events
		}
	}
	deadline := time.NewTimer(transcriptWait)
	defer deadline.Stop()
	for {
	wait:
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-deadline.C:
				return errTranscriptBehind
			case <-time.After(missedEventPoll):
				break wait
			case ev := <-changes:
				if ev.Name == path {
					break wait
				}
			}
		}
		if done, err := try(); done || err != nil {
			return err
		}
	}
}
