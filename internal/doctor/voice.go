package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/voice"
)

// voice runs [voice].command once on a second of silence.
func (d *doctor) voice(ctx context.Context, cfg *config.Config) {
	tr := voice.Transcriber{Config: cfg.Voice, Runner: d.Runner}
	for _, s := range cfg.Servers {
		if s.TokenEnv != "" {
			tr.Secrets = append(tr.Secrets, s.TokenEnv)
		}
	}
	fmt.Fprintf(d.out, "      %-22s running %s on a second of silence…\n", "", strings.Join(cfg.Voice.Command, " "))
	took, words, err := tr.Probe(ctx)
	var failed *voice.Error
	switch {
	case errors.As(err, &failed) && failed.TimedOut:
		d.add("voice", Fail, err.Error(), fmt.Sprintf("make it faster, or raise [voice].timeout (now %s)", cfg.Voice.Timeout.Duration))
	case errors.As(err, &failed):
		detail := err.Error()
		if failed.Stderr != "" {
			detail += ": " + failed.Stderr
		}
		d.add("voice", Fail, detail, "run the command by hand on an .ogg file; it must print the words on stdout and exit 0")
	case err != nil:
		d.add("voice", Fail, err.Error(), "check [voice].command")
	default:
		detail := fmt.Sprintf("%s answered in %s", cfg.Voice.Command[0], took.Round(10e6))
		if words != "" {
			detail += fmt.Sprintf(" (it heard %q in silence)", clipWords(words, 60))
		}
		d.add("voice", OK, detail, "")
	}
}

func clipWords(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
