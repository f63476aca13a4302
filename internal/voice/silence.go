package voice

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// silence is one second of silent Ogg Opus, what a voice message holds (made
// with `sox -n -r 48000 -c 1 silence.wav trim 0 1` and opus-tools 0.2's
// `opusenc --bitrate 6`): doctor runs the command on it.
//
//go:embed testdata/silence-1s.ogg
var silence []byte

// Probe runs the command once on a second of silence in a private temporary
// directory, as `ccbridge doctor` does: it says whether the command runs and
// answers in time. Silence may well give an empty transcript; that passes.
func (t Transcriber) Probe(ctx context.Context) (took time.Duration, words string, err error) {
	dir, err := os.MkdirTemp("", "ccbridge-voice-")
	if err != nil {
		return 0, "", fmt.Errorf("voice probe: %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "silence-1s.ogg")
	if err := os.WriteFile(file, silence, 0o600); err != nil {
		return 0, "", fmt.Errorf("voice probe: %w", err)
	}
	start := time.Now()
	words, err = t.Transcribe(ctx, file)
	if err == ErrEmpty {
		err = nil
	}
	return time.Since(start), words, err
}
