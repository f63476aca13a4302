package config

import (
	"slices"
	"strings"
	"time"
)

// Voice is the [voice] table: how voice messages become text. ccbridge
// bundles no speech model; the command is the user's own (a local
// whisper.cpp, a cloud API), run with the saved audio's path.
type Voice struct {
	// Command is the argv; "{file}" in an argument is replaced by the path of
	// the saved .ogg, and a leading ~/ is the home directory. Its standard
	// output is the transcript. Empty: voice messages are not transcribed.
	Command []string `toml:"command"`
	// Review posts the words with Send, Edit… and Cancel before anything
	// reaches Claude (default true); false sends them at once.
	Review *bool `toml:"review"`
	// Timeout bounds one transcription (default 2m).
	Timeout Duration `toml:"timeout"`
}

// Voice defaults and bounds.
const (
	DefaultVoiceTimeout = 2 * time.Minute
	maxVoiceTimeout     = 30 * time.Minute
	// VoiceFile is the placeholder for the audio's path in [voice].command.
	VoiceFile = "{file}"
)

// Enabled reports whether voice messages are transcribed.
func (v Voice) Enabled() bool { return len(v.Command) > 0 }

// ReviewOn reports whether transcripts wait for Send (the default).
func (v Voice) ReviewOn() bool { return v.Review == nil || *v.Review }

func (v *Voice) applyDefaults() {
	if v.Timeout.Duration == 0 {
		v.Timeout.Duration = DefaultVoiceTimeout
	}
}

func (v Voice) check(c *checker) {
	if d := v.Timeout.Duration; d <= 0 || d > maxVoiceTimeout {
		c.errf("voice.timeout", "%s must be between 1s and %s", d, maxVoiceTimeout)
	}
	if v.Command == nil {
		return
	}
	switch {
	case len(v.Command) == 0 || strings.TrimSpace(v.Command[0]) == "":
		c.errf("voice.command", `the program is missing; set it like ["~/bin/transcribe", "{file}"]`)
	case !slices.ContainsFunc(v.Command[1:], func(a string) bool { return strings.Contains(a, VoiceFile) }):
		c.errf("voice.command", "no argument holds {file}, where the saved audio's path goes")
	}
}
