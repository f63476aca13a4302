package doctor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
)

func TestDoctorRunsTheVoiceCommandOnSilence(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		script  string
		timeout time.Duration
		status  Status
		want    string
	}{
		"works":    {`head -c 4 "$1" | grep -q OggS && echo`, time.Minute, OK, "answered in"},
		"fails":    {`echo "whisper-cli: model not found" >&2; exit 1`, time.Minute, Fail, "whisper-cli: model not found"},
		"too slow": {`sleep 3`, 200 * time.Millisecond, Fail, "did not finish within 200ms"},
	} {
		t.Run(name, func(t *testing.T) {
			prog := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			if err := os.WriteFile(prog, []byte("#!/bin/sh\n"+c.script+"\n"), 0o700); err != nil {
				t.Fatal(err)
			}
			cfg := &config.Config{Voice: config.Voice{Command: []string{prog, "{file}"}, Timeout: config.Duration{Duration: c.timeout}}}
			var out bytes.Buffer
			d := &doctor{Env: Env{Runner: execx.Exec{}}, out: &out}
			d.voice(context.Background(), cfg)
			if len(d.results) != 1 || d.results[0].Status != c.status || !strings.Contains(d.results[0].Detail, c.want) {
				t.Fatalf("results %+v\n%s", d.results, out.String())
			}
			if !strings.Contains(out.String(), "on a second of silence…") {
				t.Errorf("doctor did not say what it runs first:\n%s", out.String())
			}
		})
	}
}
