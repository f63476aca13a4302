package config

import (
	"strings"
	"testing"
	"time"
)

func TestVoiceSection(t *testing.T) {
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	base := strings.ReplaceAll(validTOML, "%s", t.TempDir())
	c, err := Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if c.Voice.Enabled() || !c.Voice.ReviewOn() || c.Voice.Timeout.Duration != DefaultVoiceTimeout {
		t.Errorf("defaults: %+v", c.Voice)
	}
	c, err = Parse(base + "\n[voice]\ncommand = [\"~/bin/transcribe\", \"--in={file}\"]\nreview = false\ntimeout = \"30s\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil || !c.Voice.Enabled() || c.Voice.ReviewOn() || c.Voice.Timeout.Duration != 30*time.Second {
		t.Errorf("set: %+v, %v", c.Voice, err)
	}
	for body, want := range map[string]string{
		"command = []":                                    "voice.command: the program is missing",
		"command = [\"whisper\", \"audio.ogg\"]":          "voice.command: no argument holds {file}",
		"command = [\"w\", \"{file}\"]\ntimeout = \"1h\"": "voice.timeout: 1h0m0s must be between",
	} {
		c, err := Parse(base + "\n[voice]\n" + body + "\n")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}
