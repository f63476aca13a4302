package voice

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
)

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "transcribe")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

func transcriber(argv []string, timeout time.Duration) Transcriber {
	return Transcriber{Config: config.Voice{Command: argv, Timeout: config.Duration{Duration: timeout}}, Runner: execx.Exec{}}
}

func TestTranscribeReadsStdoutOfTheCommandOnTheFile(t *testing.T) {
	audio := filepath.Join(t.TempDir(), "note.ogg")
	if err := os.WriteFile(audio, []byte("OggS"), 0o600); err != nil {
		t.Fatal(err)
	}
	// {file} anywhere in an argument; the command sees the file.
	tr := transcriber([]string{script(t, `f="${1#--in=}"; test -f "$f" && printf '  hello from %s \n\n' "$(basename "$f")"`), "--in={file}"}, time.Minute)
	got, err := tr.Transcribe(context.Background(), audio)
	if err != nil || got != "hello from note.ogg" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestTranscribeFailuresSayWhy(t *testing.T) {
	audio := filepath.Join(t.TempDir(), "n.ogg")
	_ = os.WriteFile(audio, []byte("OggS"), 0o600)
	long := strings.Repeat("x", 1000)
	tr := transcriber([]string{script(t, `echo "`+long+`model not found: ggml-base.bin" >&2; exit 3`), "{file}"}, time.Minute)
	_, err := tr.Transcribe(context.Background(), audio)
	var e *Error
	if !errors.As(err, &e) || e.TimedOut || !strings.HasSuffix(e.Stderr, "model not found: ggml-base.bin") || len([]rune(e.Stderr)) != StderrTail+1 {
		t.Fatalf("failure: %#v", err)
	}
	if !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("error %q names no exit status", err)
	}

	tr = transcriber([]string{script(t, `echo working >&2; sleep 5`), "{file}"}, 300*time.Millisecond)
	start := time.Now()
	_, err = tr.Transcribe(context.Background(), audio)
	if !errors.As(err, &e) || !e.TimedOut || time.Since(start) > 4*time.Second {
		t.Fatalf("timeout: %v after %s", err, time.Since(start))
	}
	if !strings.Contains(err.Error(), "did not finish within 300ms") {
		t.Errorf("timeout error %q", err)
	}

	tr = transcriber([]string{script(t, `printf ' \n'`), "{file}"}, time.Minute)
	if _, err := tr.Transcribe(context.Background(), audio); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty transcript: %v", err)
	}
	if _, err := transcriber(nil, time.Minute).Transcribe(context.Background(), audio); err == nil {
		t.Error("no command configured: no error")
	}
}

func TestTranscriberNeverSeesTheBotToken(t *testing.T) {
	t.Setenv("CCBRIDGE_TOKEN_HOME", "secret-token")
	t.Setenv("TRANSCRIBE_API_KEY", "key-it-needs")
	audio := filepath.Join(t.TempDir(), "n.ogg")
	_ = os.WriteFile(audio, []byte("OggS"), 0o600)
	tr := transcriber([]string{script(t, `echo "token=${CCBRIDGE_TOKEN_HOME:-none} key=$TRANSCRIBE_API_KEY"`), "{file}"}, time.Minute)
	tr.Secrets = []string{"CCBRIDGE_TOKEN_HOME"}
	got, err := tr.Transcribe(context.Background(), audio)
	if err != nil || got != "token=none key=key-it-needs" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestArgvExpandsHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	argv, err := transcriber([]string{"~/bin/transcribe", "-f", "{file}"}, time.Minute).Argv("/tmp/a.ogg")
	if err != nil || argv[0] != filepath.Join(home, "bin", "transcribe") || argv[2] != "/tmp/a.ogg" {
		t.Fatalf("argv %q, %v", argv, err)
	}
}

func TestProbeRunsTheCommandOnASecondOfSilence(t *testing.T) {
	if len(silence) < 100 || string(silence[:4]) != "OggS" {
		t.Fatalf("the shipped silence is no Ogg file: %q", silence[:min(8, len(silence))])
	}
	// The command sees an Ogg file; silence may transcribe to nothing.
	tr := transcriber([]string{script(t, `head -c 4 "$1" | grep -q OggS || { echo "not ogg" >&2; exit 1; }`), "{file}"}, time.Minute)
	if _, words, err := tr.Probe(context.Background()); err != nil || words != "" {
		t.Fatalf("probe: %q, %v", words, err)
	}
	tr = transcriber([]string{script(t, `echo "no model" >&2; exit 2`), "{file}"}, time.Minute)
	var e *Error
	if _, _, err := tr.Probe(context.Background()); !errors.As(err, &e) || e.Stderr != "no model" {
		t.Fatalf("failing probe: %v", err)
	}
}
