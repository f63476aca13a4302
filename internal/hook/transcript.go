package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Claude Code 2.1.328 writes its transcript behind its hooks: the final
// message is not there yet when Stop fires, nor the tool call when an async
// PreToolUse runs (both seen in the e2e tier). Hooks that need those lines
// wait for the file to change, then look again; they never sleep on a
// guess. Claude never waits for those waits: PreToolUse is async, and
// Stop waits in the run it detached (detach.go).
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

// lastUsageTail is how much of the transcript's end lastUsage reads: the
// turn's final message is there by the time the reply is posted.
const lastUsageTail = 64 << 10

// usage is what the transcript says of the last assistant message: its
// model and the context it used.
type usage struct {
	model  string // the model id, as the API answered it
	tokens int64  // input, cache creation and cache read: the context in use
	ok     bool   // the message carried its usage
}

// lastUsage reads the model and usage of the transcript's last assistant
// message (not a subagent's).
func lastUsage(path string) (usage, error) {
	f, err := os.Open(path)
	if err != nil {
		return usage{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return usage{}, err
	}
	off := max(fi.Size()-lastUsageTail, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return usage{}, err
	}
	lines := bytes.Split(buf, []byte{'\n'})
	if off > 0 {
		lines = lines[1:] // cut at the start
	}
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		if !bytes.Contains(line, []byte(`"assistant"`)) || !bytes.Contains(line, []byte(`"usage"`)) {
			continue
		}
		var e struct {
			Type        string `json:"type"`
			IsSidechain bool   `json:"isSidechain"`
			Message     struct {
				Model string `json:"model"`
				Usage *struct {
					InputTokens              int64 `json:"input_tokens"`
					CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
					CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &e) != nil || e.Type != "assistant" || e.IsSidechain || e.Message.Usage == nil {
			continue
		}
		u := e.Message.Usage
		return usage{model: e.Message.Model, tokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, ok: true}, nil
	}
	return usage{}, nil
}
