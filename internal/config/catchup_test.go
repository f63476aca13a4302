package config

import (
	"strings"
	"testing"
	"time"
)

func TestCatchUpDefaultAndBounds(t *testing.T) {
	c := parseValid(t)
	if c.Discord.CatchUp.Duration != 15*time.Minute {
		t.Errorf("catch_up default = %s, want 15m", c.Discord.CatchUp.Duration)
	}
	for _, tc := range []struct {
		value string
		ok    bool
	}{{"30s", true}, {"24h", true}, {"-1m", false}, {"500ms", false}, {"25h", false}} {
		t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
		toml := "[discord]\ncatch_up = \"" + tc.value + "\"\n" + strings.ReplaceAll(validTOML, "%s", t.TempDir())
		c, err := Parse(toml)
		if err != nil {
			t.Fatalf("%s: %v", tc.value, err)
		}
		err = c.Validate()
		if tc.ok != (err == nil) {
			t.Errorf("catch_up = %q: err = %v, want ok=%v", tc.value, err, tc.ok)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "discord.catch_up")) {
			t.Errorf("catch_up = %q: error does not name the key: %v", tc.value, err)
		}
	}
	if _, err := Parse("[discord]\ncatch_up = \"soon\"\n"); err == nil || !strings.Contains(err.Error(), "soon") {
		t.Errorf("catch_up = soon: err = %v", err)
	}
}
